-- 0007: every change row of the feed (0006) carries the record as that change left it: the
-- columns /v1/history/hash renders, copied by the triggers from NEW (and only a change of one
-- of those is a change: source_tx_index, which no answer shows, no longer is). So an event is
-- the record at its change (two changes published in one round each carry their own state),
-- and a client that comes back, or polls, after an id it has seen is answered the changes it
-- missed, each as it was published, from the feed alone (src/db/change_feed.h).
--
-- The three address columns are indexed (each with seq, InnoDB's primary key, at its end): the
-- missed changes of an address are three index ranges, never a scan of the feed. `id` is the
-- record's id under the name history gives it (a virtual column), so the feed's rows are read
-- with history's own column list (src/db/change_feed.cpp).
--
-- Rows written before the triggers below get their record's state now (the best there is); a
-- row whose record is gone keeps NULLs and is passed over, as before. A row has a state when
-- its hash is not NULL. The triggers are replaced and the rows filled with history locked, so
-- no change is written in between without a state, or not at all.

ALTER TABLE history_changes
  ADD COLUMN id BIGINT UNSIGNED AS (history_id) VIRTUAL,
  ADD COLUMN hash CHAR(64) CHARACTER SET ascii NULL,
  ADD COLUMN pair_id BIGINT UNSIGNED NULL,
  ADD COLUMN source_chain SMALLINT UNSIGNED NULL,
  ADD COLUMN destination_chain SMALLINT UNSIGNED NULL,
  ADD COLUMN source_deposit_address CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NULL,
  ADD COLUMN source_sender CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NULL,
  ADD COLUMN destination_address CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NULL,
  ADD COLUMN source_block_number BIGINT UNSIGNED NULL,
  ADD COLUMN destination_block_number BIGINT UNSIGNED NULL,
  ADD COLUMN source_block_timestamp BIGINT UNSIGNED NULL,
  ADD COLUMN destination_block_timestamp BIGINT UNSIGNED NULL,
  ADD COLUMN source_tx_hash CHAR(66) CHARACTER SET ascii COLLATE ascii_general_ci NULL,
  ADD COLUMN destination_tx_hash CHAR(66) CHARACTER SET ascii COLLATE ascii_general_ci NULL,
  ADD COLUMN source_asset_id BIGINT UNSIGNED NULL,
  ADD COLUMN destination_asset_id BIGINT UNSIGNED NULL,
  ADD COLUMN source_amount VARCHAR(78) CHARACTER SET ascii NULL,
  ADD COLUMN destination_amount VARCHAR(78) CHARACTER SET ascii NULL,
  ADD COLUMN fee VARCHAR(78) CHARACTER SET ascii NULL,
  ADD COLUMN status ENUM('Deposit', 'Pending', 'Confirmed', 'Error') NULL,
  ADD COLUMN status_message VARCHAR(255) NULL,
  ADD KEY ix_history_changes_source_deposit_address (source_deposit_address),
  ADD KEY ix_history_changes_source_sender (source_sender),
  ADD KEY ix_history_changes_destination_address (destination_address);

LOCK TABLES history WRITE, history_changes WRITE;

DROP TRIGGER history_changes_insert;
DROP TRIGGER history_changes_update;

DELIMITER //
CREATE TRIGGER history_changes_insert AFTER INSERT ON history FOR EACH ROW
BEGIN
  IF @connector_bulk_load IS NULL AND @@global.read_only = 0 THEN
    INSERT INTO history_changes (history_id, changed_us, hash, pair_id, source_chain,
        destination_chain, source_deposit_address, source_sender, destination_address,
        source_block_number, destination_block_number, source_block_timestamp,
        destination_block_timestamp, source_tx_hash, destination_tx_hash,
        source_asset_id, destination_asset_id, source_amount, destination_amount, fee, status,
        status_message)
      VALUES (NEW.id, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), NEW.hash, NEW.pair_id,
        NEW.source_chain, NEW.destination_chain, NEW.source_deposit_address, NEW.source_sender,
        NEW.destination_address, NEW.source_block_number, NEW.destination_block_number,
        NEW.source_block_timestamp, NEW.destination_block_timestamp, NEW.source_tx_hash,
        NEW.destination_tx_hash, NEW.source_asset_id,
        NEW.destination_asset_id, NEW.source_amount, NEW.destination_amount, NEW.fee, NEW.status,
        NEW.status_message);
  END IF;
END//

CREATE TRIGGER history_changes_update AFTER UPDATE ON history FOR EACH ROW
BEGIN
  IF @connector_bulk_load IS NULL AND @@global.read_only = 0 AND NOT (NEW.hash <=> OLD.hash
      AND NEW.pair_id <=> OLD.pair_id
      AND NEW.source_chain <=> OLD.source_chain
      AND NEW.destination_chain <=> OLD.destination_chain
      AND NEW.source_deposit_address <=> OLD.source_deposit_address
      AND NEW.source_sender <=> OLD.source_sender
      AND NEW.destination_address <=> OLD.destination_address
      AND NEW.source_block_number <=> OLD.source_block_number
      AND NEW.destination_block_number <=> OLD.destination_block_number
      AND NEW.source_block_timestamp <=> OLD.source_block_timestamp
      AND NEW.destination_block_timestamp <=> OLD.destination_block_timestamp
      AND NEW.source_tx_hash <=> OLD.source_tx_hash
      AND NEW.destination_tx_hash <=> OLD.destination_tx_hash
      AND NEW.source_asset_id <=> OLD.source_asset_id
      AND NEW.destination_asset_id <=> OLD.destination_asset_id
      AND NEW.source_amount <=> OLD.source_amount
      AND NEW.destination_amount <=> OLD.destination_amount
      AND NEW.fee <=> OLD.fee
      AND NEW.status <=> OLD.status
      AND NEW.status_message <=> OLD.status_message) THEN
    INSERT INTO history_changes (history_id, changed_us, hash, pair_id, source_chain,
        destination_chain, source_deposit_address, source_sender, destination_address,
        source_block_number, destination_block_number, source_block_timestamp,
        destination_block_timestamp, source_tx_hash, destination_tx_hash,
        source_asset_id, destination_asset_id, source_amount, destination_amount, fee, status,
        status_message)
      VALUES (NEW.id, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), NEW.hash, NEW.pair_id,
        NEW.source_chain, NEW.destination_chain, NEW.source_deposit_address, NEW.source_sender,
        NEW.destination_address, NEW.source_block_number, NEW.destination_block_number,
        NEW.source_block_timestamp, NEW.destination_block_timestamp, NEW.source_tx_hash,
        NEW.destination_tx_hash, NEW.source_asset_id,
        NEW.destination_asset_id, NEW.source_amount, NEW.destination_amount, NEW.fee, NEW.status,
        NEW.status_message);
  END IF;
END//
DELIMITER ;

UPDATE history_changes JOIN history ON history.id = history_changes.history_id SET
  history_changes.hash = history.hash, history_changes.pair_id = history.pair_id,
  history_changes.source_chain = history.source_chain,
  history_changes.destination_chain = history.destination_chain,
  history_changes.source_deposit_address = history.source_deposit_address,
  history_changes.source_sender = history.source_sender,
  history_changes.destination_address = history.destination_address,
  history_changes.source_block_number = history.source_block_number,
  history_changes.destination_block_number = history.destination_block_number,
  history_changes.source_block_timestamp = history.source_block_timestamp,
  history_changes.destination_block_timestamp = history.destination_block_timestamp,
  history_changes.source_tx_hash = history.source_tx_hash,
  history_changes.destination_tx_hash = history.destination_tx_hash,
  history_changes.source_asset_id = history.source_asset_id,
  history_changes.destination_asset_id = history.destination_asset_id,
  history_changes.source_amount = history.source_amount,
  history_changes.destination_amount = history.destination_amount,
  history_changes.fee = history.fee, history_changes.status = history.status,
  history_changes.status_message = history.status_message
  WHERE history_changes.hash IS NULL;

UNLOCK TABLES;
