-- 0007: every change row of the feed (0006) carries the record as that change left it: the
-- columns /v1/history/hash renders, copied by the triggers from NEW. So an event is the record
-- at its change (two changes published in one round each carry their own state), and a client
-- that reconnects, or polls, after an id it has seen is answered the changes it missed, each as
-- it was published, from the feed alone (src/db/change_feed.h).
--
-- The three address columns are indexed (each with seq, InnoDB's primary key, at its end): the
-- missed changes of an address are three index ranges, never a scan of the feed.
--
-- Rows written before this migration get their record's state now (the best there is); a row
-- whose record is gone keeps NULLs and is passed over, as before. A row has a state when its
-- hash is not NULL.

ALTER TABLE history_changes
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

UPDATE history_changes c JOIN history h ON h.id = c.history_id SET
  c.hash = h.hash, c.pair_id = h.pair_id, c.source_chain = h.source_chain,
  c.destination_chain = h.destination_chain, c.source_deposit_address = h.source_deposit_address,
  c.source_sender = h.source_sender, c.destination_address = h.destination_address,
  c.source_block_number = h.source_block_number,
  c.destination_block_number = h.destination_block_number,
  c.source_block_timestamp = h.source_block_timestamp,
  c.destination_block_timestamp = h.destination_block_timestamp,
  c.source_tx_hash = h.source_tx_hash,
  c.destination_tx_hash = h.destination_tx_hash, c.source_asset_id = h.source_asset_id,
  c.destination_asset_id = h.destination_asset_id, c.source_amount = h.source_amount,
  c.destination_amount = h.destination_amount, c.fee = h.fee, c.status = h.status,
  c.status_message = h.status_message;

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
      AND NEW.source_tx_index <=> OLD.source_tx_index
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
