-- 0006: the change feed of history, read by the event publisher (src/events/).
--
-- A row per change of a record that an answer shows: its insert, and every update that changes
-- a column /v1/history/hash renders (all of them but the id). seq orders the changes; the
-- publisher keeps the last seq it published and reads on from there. changed_us is the
-- writing server's clock (microseconds since the epoch), for the trim below.
--
-- Written by triggers on the primary; with row-based replication a replica applies the rows the
-- triggers wrote (its own triggers do not fire for replicated row events), so every server
-- holds the same seq for the same change and each node's publisher reads its own server. The
-- triggers write nothing where the server is read_only (a replica): a change made there by hand
-- would take a seq the primary's next change replicates with, and stop replication on a
-- duplicate key. A promoted replica (read_only off) writes the feed from then on.
--
-- seq comes from AUTO_INCREMENT when the row is inserted, not when its transaction commits:
-- a change can become visible after a higher seq (two writers), and a rolled-back change
-- leaves a hole that never fills. The publisher waits a bounded time for a hole before it
-- passes over it (events_gap_wait_ms).
--
-- A bulk load (@connector_bulk_load, connector-admin's bulk import) writes no change rows, as
-- it keeps no counters: a backfill is not news to a subscriber.
--
-- The feed is trimmed by age on the primary (the event below; replication deletes the same rows
-- on the replicas): changes older than a day go, so a publisher stopped for longer than that
-- resumes at the oldest change still held (it logs how many it passed over).

CREATE TABLE history_changes (
  seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  history_id BIGINT UNSIGNED NOT NULL,
  changed_us BIGINT NOT NULL,
  PRIMARY KEY (seq),
  -- A record's newest change (the id of the state a new subscriber is sent first).
  KEY ix_history_changes_record (history_id),
  KEY ix_history_changes_changed (changed_us)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

DELIMITER //
CREATE TRIGGER history_changes_insert AFTER INSERT ON history FOR EACH ROW
BEGIN
  IF @connector_bulk_load IS NULL AND @@global.read_only = 0 THEN
    INSERT INTO history_changes (history_id, changed_us)
      VALUES (NEW.id, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)));
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
    INSERT INTO history_changes (history_id, changed_us)
      VALUES (NEW.id, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)));
  END IF;
END//

CREATE EVENT history_changes_trim
  ON SCHEDULE EVERY 1 MINUTE
  ON COMPLETION PRESERVE
  ENABLE
  COMMENT 'connector: trims the change feed to a day (sql/migrations/0006)'
DO
BEGIN
  SET SESSION innodb_lock_wait_timeout = 1;
  IF @@global.read_only = 0 THEN
    DELETE FROM history_changes
      WHERE changed_us < (UNIX_TIMESTAMP() - 86400) * 1000000
      ORDER BY seq LIMIT 100000;
  END IF;
END//
DELIMITER ;
