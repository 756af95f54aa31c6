-- 0002: exact totals without scans, and indexes for the common filter pairs.
--
-- history_counts holds one row per combination of the coarse dimensions a history filter can
-- name (status, pair, chains, assets). There are few such combinations (pairs x directions x
-- statuses), so the total of any mix of coarse filters is the sum of a handful of counter rows
-- instead of a COUNT(*) over millions of records. Triggers keep it exact on insert, on a change
-- of status (or any other coarse column) and on delete. See docs/schema.md.

CREATE TABLE history_counts (
  status ENUM('Deposit', 'Pending', 'Confirmed', 'Error') NOT NULL,
  pair_id BIGINT UNSIGNED NOT NULL,
  source_chain SMALLINT UNSIGNED NOT NULL,
  destination_chain SMALLINT UNSIGNED NOT NULL,
  source_asset_id BIGINT UNSIGNED NOT NULL,
  destination_asset_id BIGINT UNSIGNED NOT NULL,
  records BIGINT NOT NULL,
  PRIMARY KEY (status, pair_id, source_chain, destination_chain, source_asset_id,
               destination_asset_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

INSERT INTO history_counts
  SELECT status, pair_id, source_chain, destination_chain, source_asset_id, destination_asset_id,
         COUNT(*)
  FROM history
  GROUP BY status, pair_id, source_chain, destination_chain, source_asset_id,
           destination_asset_id;

-- A bulk loader may set @connector_bulk_load = 1 in its session to skip the per-row upkeep, and
-- must then rebuild history_counts itself before committing (connector-admin gen-history does).
DELIMITER //
CREATE TRIGGER history_counts_insert AFTER INSERT ON history FOR EACH ROW
BEGIN
  IF @connector_bulk_load IS NULL THEN
    INSERT INTO history_counts VALUES (NEW.status, NEW.pair_id, NEW.source_chain,
      NEW.destination_chain, NEW.source_asset_id, NEW.destination_asset_id, 1)
    ON DUPLICATE KEY UPDATE records = records + 1;
  END IF;
END//

CREATE TRIGGER history_counts_delete AFTER DELETE ON history FOR EACH ROW
BEGIN
  IF @connector_bulk_load IS NULL THEN
    UPDATE history_counts SET records = records - 1
    WHERE status = OLD.status AND pair_id = OLD.pair_id AND source_chain = OLD.source_chain
      AND destination_chain = OLD.destination_chain AND source_asset_id = OLD.source_asset_id
      AND destination_asset_id = OLD.destination_asset_id;
  END IF;
END//

CREATE TRIGGER history_counts_update AFTER UPDATE ON history FOR EACH ROW
BEGIN
  IF @connector_bulk_load IS NULL AND (NEW.status <> OLD.status OR NEW.pair_id <> OLD.pair_id
      OR NEW.source_chain <> OLD.source_chain OR NEW.destination_chain <> OLD.destination_chain
      OR NEW.source_asset_id <> OLD.source_asset_id
      OR NEW.destination_asset_id <> OLD.destination_asset_id) THEN
    UPDATE history_counts SET records = records - 1
    WHERE status = OLD.status AND pair_id = OLD.pair_id AND source_chain = OLD.source_chain
      AND destination_chain = OLD.destination_chain AND source_asset_id = OLD.source_asset_id
      AND destination_asset_id = OLD.destination_asset_id;
    INSERT INTO history_counts VALUES (NEW.status, NEW.pair_id, NEW.source_chain,
      NEW.destination_chain, NEW.source_asset_id, NEW.destination_asset_id, 1)
    ON DUPLICATE KEY UPDATE records = records + 1;
  END IF;
END//
DELIMITER ;

-- The common pairs of a fine or chain filter with status. InnoDB appends the primary key, so
-- each is (column, status, id): "WHERE column = ? AND status = ? ORDER BY id" walks one range.
-- ix_history_id is the narrowest index in id order: an unfiltered deep page skips its offset
-- over 8-byte entries instead of whole clustered rows.
ALTER TABLE history
  ADD KEY ix_history_destination_address_status (destination_address, status),
  ADD KEY ix_history_source_deposit_address_status (source_deposit_address, status),
  ADD KEY ix_history_source_sender_status (source_sender, status),
  ADD KEY ix_history_source_chain_status (source_chain, status),
  ADD KEY ix_history_destination_chain_status (destination_chain, status),
  ADD KEY ix_history_pair_status (pair_id, status),
  ADD KEY ix_history_id (id);
