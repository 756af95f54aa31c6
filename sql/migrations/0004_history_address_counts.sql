-- 0004: exact totals of one address's history without counting its index entries.
--
-- A page filtered by one address (source_deposit_address, source_sender or
-- destination_address), alone or with a status, carried its total as a COUNT(*) over the
-- address's index range: a few entries for most addresses, but tens of thousands for an
-- exchange's hot wallet (3.2 ms of MariaDB per page at 16,794 records, the busiest address of
-- scripts/bench). history_address_counts keeps, per address column, address and status, the
-- number of records, so such a total is one to four counter rows. Triggers keep it exact in the
-- same transaction as the change, beside history_counts' (0002). Addresses compare as the
-- history columns do (ascii_general_ci), so the counter of an address counts exactly the rows
-- `column = address` finds. See docs/schema.md.

CREATE TABLE history_address_counts (
  address_column ENUM('source_deposit_address', 'source_sender', 'destination_address') NOT NULL,
  address CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  status ENUM('Deposit', 'Pending', 'Confirmed', 'Error') NOT NULL,
  records BIGINT NOT NULL,
  PRIMARY KEY (address_column, address, status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One record's three counters (one per address column) moved by delta: +1 for a record that
-- appears, -1 for one that goes (its rows exist then; a -1 inserted instead would show as a
-- negative count, which the tests look for).
DELIMITER //
CREATE PROCEDURE history_address_counts_add(
  IN deposit_address CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci,
  IN sender CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci,
  IN destination_address CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci,
  IN record_status ENUM('Deposit', 'Pending', 'Confirmed', 'Error'),
  IN delta INT)
BEGIN
  INSERT INTO history_address_counts VALUES
    ('source_deposit_address', deposit_address, record_status, delta),
    ('source_sender', sender, record_status, delta),
    ('destination_address', destination_address, record_status, delta)
  ON DUPLICATE KEY UPDATE records = records + delta;
END//
DELIMITER ;

-- The triggers and the initial counts under one write lock on history, so no record the nodes
-- write meanwhile is missed or counted twice: writers wait for the fill (one read of history
-- per address column; seconds per million records). @connector_bulk_load skips the upkeep as for
-- history_counts: the loader rebuilds both.
LOCK TABLES history WRITE, history_address_counts WRITE;

DELIMITER //
CREATE TRIGGER history_address_counts_insert AFTER INSERT ON history FOR EACH ROW
BEGIN
  IF @connector_bulk_load IS NULL THEN
    CALL history_address_counts_add(NEW.source_deposit_address, NEW.source_sender,
                                    NEW.destination_address, NEW.status, 1);
  END IF;
END//

CREATE TRIGGER history_address_counts_delete AFTER DELETE ON history FOR EACH ROW
BEGIN
  IF @connector_bulk_load IS NULL THEN
    CALL history_address_counts_add(OLD.source_deposit_address, OLD.source_sender,
                                    OLD.destination_address, OLD.status, -1);
  END IF;
END//

CREATE TRIGGER history_address_counts_update AFTER UPDATE ON history FOR EACH ROW
BEGIN
  IF @connector_bulk_load IS NULL AND (NEW.status <> OLD.status
      OR NEW.source_deposit_address <> OLD.source_deposit_address
      OR NEW.source_sender <> OLD.source_sender
      OR NEW.destination_address <> OLD.destination_address) THEN
    CALL history_address_counts_add(OLD.source_deposit_address, OLD.source_sender,
                                    OLD.destination_address, OLD.status, -1);
    CALL history_address_counts_add(NEW.source_deposit_address, NEW.source_sender,
                                    NEW.destination_address, NEW.status, 1);
  END IF;
END//
DELIMITER ;

INSERT INTO history_address_counts
  SELECT 'source_deposit_address', source_deposit_address, status, COUNT(*)
  FROM history GROUP BY source_deposit_address, status;
INSERT INTO history_address_counts
  SELECT 'source_sender', source_sender, status, COUNT(*)
  FROM history GROUP BY source_sender, status;
INSERT INTO history_address_counts
  SELECT 'destination_address', destination_address, status, COUNT(*)
  FROM history GROUP BY destination_address, status;

UNLOCK TABLES;
