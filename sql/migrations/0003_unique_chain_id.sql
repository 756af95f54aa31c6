-- 0003: a chain id names one chain. The deposit address's salt is derived from the recipient
-- chain's chain_id (docs/contract-notes.md), so two chains sharing one would derive the same deposit
-- address for two different recipients' chains.
ALTER TABLE chains ADD UNIQUE KEY uq_chains_chain_id (chain_id);
