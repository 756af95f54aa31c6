-- 0001: the initial schema of the query service.
--
-- Conventions (see docs/schema.md for the reasons):
-- * Amounts are exact unsigned integers in the asset's base unit. They can reach 2^256-1
--   (78 digits), more than DECIMAL(65,0) holds, so they are stored as their canonical decimal
--   digits in an ascii VARCHAR(78) guarded by a CHECK.
-- * Addresses and tx hashes are ascii with a case-insensitive collation: the service stores the
--   rendered form (EIP-55 addresses, lower-case hashes) and filters match any case through the
--   collation, with 1 byte per character in every index entry.
-- * NULL means "not recorded by the nodes yet"; the API renders it as "".

CREATE TABLE chains (
  id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  slug VARCHAR(32) CHARACTER SET ascii NOT NULL,
  network VARCHAR(32) CHARACTER SET ascii NOT NULL,
  chain_id BIGINT UNSIGNED NOT NULL,
  base_chain ENUM('MainBase', 'SideBase') NOT NULL,
  -- CREATE2 parameters of the deposit forwarders on this chain (NULL: not a deposit chain).
  deposit_factory CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NULL,
  deposit_init_code_hash CHAR(66) CHARACTER SET ascii COLLATE ascii_general_ci NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_chains_slug (slug),
  UNIQUE KEY uq_chains_network (network)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Written by the nodes: what /v1/ab shows.
CREATE TABLE chain_status (
  chain_ref SMALLINT UNSIGNED NOT NULL,
  status ENUM('OK', 'STUCK', 'OFFLINE', 'SYNCING') NOT NULL,
  latest_height BIGINT UNSIGNED NOT NULL,
  supply VARCHAR(78) CHARACTER SET ascii NOT NULL,
  updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (chain_ref),
  CONSTRAINT fk_chain_status_chain FOREIGN KEY (chain_ref) REFERENCES chains (id),
  CONSTRAINT ck_chain_status_supply CHECK (supply REGEXP '^(0|[1-9][0-9]*)$')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE assets (
  id BIGINT UNSIGNED NOT NULL,
  chain_ref SMALLINT UNSIGNED NOT NULL,
  address VARCHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,  -- '' for the coin
  name VARCHAR(64) NOT NULL,
  symbol VARCHAR(32) NOT NULL,
  decimals TINYINT UNSIGNED NOT NULL,
  asset_type ENUM('Coin', 'ERC-20', 'NRC-6', 'BRC-20') NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_assets_chain_address (chain_ref, address),
  CONSTRAINT fk_assets_chain FOREIGN KEY (chain_ref) REFERENCES chains (id),
  CONSTRAINT ck_assets_decimals CHECK (decimals <= 18)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A connect joins two chains; chain_a is listed as bc1.
CREATE TABLE connects (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT,
  chain_a SMALLINT UNSIGNED NOT NULL,
  chain_b SMALLINT UNSIGNED NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_connects_chains (chain_a, chain_b),
  CONSTRAINT fk_connects_a FOREIGN KEY (chain_a) REFERENCES chains (id),
  CONSTRAINT fk_connects_b FOREIGN KEY (chain_b) REFERENCES chains (id),
  CONSTRAINT ck_connects_distinct CHECK (chain_a <> chain_b)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Amounts in the base unit of the direction's source asset; fee percent in millionths of the
-- base-10000 percent ("30.000000" = 30000000).
CREATE TABLE pairs (
  id BIGINT UNSIGNED NOT NULL,
  asset_a_id BIGINT UNSIGNED NOT NULL,
  asset_b_id BIGINT UNSIGNED NOT NULL,
  a2b_min_deposit_amount VARCHAR(78) CHARACTER SET ascii NOT NULL,
  b2a_min_deposit_amount VARCHAR(78) CHARACTER SET ascii NOT NULL,
  a2b_fee_percent_millionths BIGINT UNSIGNED NOT NULL,
  b2a_fee_percent_millionths BIGINT UNSIGNED NOT NULL,
  a2b_fee_min_amount VARCHAR(78) CHARACTER SET ascii NOT NULL,
  b2a_fee_min_amount VARCHAR(78) CHARACTER SET ascii NOT NULL,
  a2b_auto_confirm_deposit_amount VARCHAR(78) CHARACTER SET ascii NOT NULL,
  b2a_auto_confirm_deposit_amount VARCHAR(78) CHARACTER SET ascii NOT NULL,
  a2b_disabled BOOLEAN NOT NULL,
  b2a_disabled BOOLEAN NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_pairs_assets (asset_a_id, asset_b_id),
  KEY ix_pairs_asset_b (asset_b_id),
  CONSTRAINT fk_pairs_asset_a FOREIGN KEY (asset_a_id) REFERENCES assets (id),
  CONSTRAINT fk_pairs_asset_b FOREIGN KEY (asset_b_id) REFERENCES assets (id),
  CONSTRAINT ck_pairs_fee CHECK (a2b_fee_percent_millionths <= 10000000000
                                 AND b2a_fee_percent_millionths <= 10000000000)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The recorded recipient -> deposit address mappings the chain watchers follow. The only table
-- the query service writes (insert-if-absent on the unique key).
CREATE TABLE deposit_accounts (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  deposit_chain SMALLINT UNSIGNED NOT NULL,
  deposit_address CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  recipient_chain SMALLINT UNSIGNED NOT NULL,
  recipient_address CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (id),
  UNIQUE KEY uq_deposit_accounts_deposit (deposit_chain, deposit_address),
  KEY ix_deposit_accounts_recipient (recipient_chain, recipient_address),
  CONSTRAINT fk_deposit_accounts_deposit FOREIGN KEY (deposit_chain) REFERENCES chains (id),
  CONSTRAINT fk_deposit_accounts_recipient FOREIGN KEY (recipient_chain) REFERENCES chains (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Transfers. Every filter of /v1/history has its own single-column index; InnoDB appends the
-- primary key to each, so "WHERE f = ? ORDER BY id DESC|ASC LIMIT n" walks one index range in
-- either direction without a filesort.
CREATE TABLE history (
  id BIGINT UNSIGNED NOT NULL,
  hash CHAR(64) CHARACTER SET ascii NOT NULL,
  pair_id BIGINT UNSIGNED NOT NULL,
  source_chain SMALLINT UNSIGNED NOT NULL,
  destination_chain SMALLINT UNSIGNED NOT NULL,
  source_deposit_address CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  source_sender CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  destination_address CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  source_block_number BIGINT UNSIGNED NOT NULL,
  destination_block_number BIGINT UNSIGNED NULL,
  source_block_timestamp BIGINT UNSIGNED NOT NULL,
  destination_block_timestamp BIGINT UNSIGNED NULL,
  source_tx_hash CHAR(66) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  source_tx_index INT UNSIGNED NOT NULL,
  destination_tx_hash CHAR(66) CHARACTER SET ascii COLLATE ascii_general_ci NULL,
  source_asset_id BIGINT UNSIGNED NOT NULL,
  destination_asset_id BIGINT UNSIGNED NOT NULL,
  source_amount VARCHAR(78) CHARACTER SET ascii NOT NULL,
  destination_amount VARCHAR(78) CHARACTER SET ascii NULL,
  fee VARCHAR(78) CHARACTER SET ascii NULL,
  status ENUM('Deposit', 'Pending', 'Confirmed', 'Error') NOT NULL,
  status_message VARCHAR(255) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_history_hash (hash),
  KEY ix_history_source_deposit_address (source_deposit_address),
  KEY ix_history_source_sender (source_sender),
  KEY ix_history_source_chain (source_chain),
  KEY ix_history_source_asset (source_asset_id),
  KEY ix_history_source_tx_hash (source_tx_hash),
  KEY ix_history_destination_address (destination_address),
  KEY ix_history_destination_chain (destination_chain),
  KEY ix_history_destination_asset (destination_asset_id),
  KEY ix_history_destination_tx_hash (destination_tx_hash),
  KEY ix_history_pair (pair_id),
  KEY ix_history_status (status),
  CONSTRAINT fk_history_pair FOREIGN KEY (pair_id) REFERENCES pairs (id),
  CONSTRAINT fk_history_source_chain FOREIGN KEY (source_chain) REFERENCES chains (id),
  CONSTRAINT fk_history_destination_chain FOREIGN KEY (destination_chain) REFERENCES chains (id),
  CONSTRAINT fk_history_source_asset FOREIGN KEY (source_asset_id) REFERENCES assets (id),
  CONSTRAINT fk_history_destination_asset FOREIGN KEY (destination_asset_id) REFERENCES assets (id),
  CONSTRAINT ck_history_amounts CHECK (
    source_amount REGEXP '^(0|[1-9][0-9]*)$'
    AND (destination_amount IS NULL OR destination_amount REGEXP '^(0|[1-9][0-9]*)$')
    AND (fee IS NULL OR fee REGEXP '^(0|[1-9][0-9]*)$'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
