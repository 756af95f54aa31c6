-- 0005: a heartbeat row that lets a worker measure how far behind each read replica is.
--
-- The primary's event scheduler writes its own row here every second: the server_id that
-- wrote it and the primary's clock in microseconds since the epoch. Replication copies the row
-- to every replica like any other write, so a replica's newest written_us is the primary's
-- clock as of the last change the replica has applied, and the primary's clock now minus that
-- is the replica's lag as its readers see it (pt-heartbeat's method). Unlike
-- Seconds_Behind_Master it needs no privilege beyond the reader's SELECT, keeps growing while
-- a replica's SQL thread is stopped or broken, and holds through chained replicas.
-- db/replica_monitor.h reads it; docs/operations.md (replication lag) has the operator's side.
--
-- The clock is read as seconds since the epoch plus the microseconds of the same instant (one
-- statement, one start time): neither depends on the session's time zone, so no change of summer
-- time moves it back.
--
-- The event runs only where the server is writable (read_only = 0): on a replica its copy of
-- the event is disabled by replication (SLAVESIDE_DISABLED) and the check keeps it idle even
-- if enabled, so after promoting a replica an operator enables it there
-- (ALTER EVENT replication_heartbeat_tick ENABLE). Needs the server's event scheduler
-- (scripts/mariadb-start turns it on; event_scheduler=ON in a production my.cnf).

CREATE TABLE replication_heartbeat (
  server_id INT UNSIGNED NOT NULL PRIMARY KEY,
  written_us BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

DELIMITER //
CREATE EVENT replication_heartbeat_tick
  ON SCHEDULE EVERY 1 SECOND
  ON COMPLETION PRESERVE
  ENABLE
  COMMENT 'connector: replication lag heartbeat (sql/migrations/0005)'
DO
BEGIN
  -- A heartbeat that cannot take its row lock within a second skips this tick rather than
  -- queue behind a stuck transaction.
  SET SESSION innodb_lock_wait_timeout = 1;
  IF @@global.read_only = 0 THEN
    REPLACE INTO replication_heartbeat (server_id, written_us)
      VALUES (@@server_id, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)));
  END IF;
END //
DELIMITER ;

-- The first row now, so that a worker started right after the migration can measure at once.
REPLACE INTO replication_heartbeat (server_id, written_us)
  VALUES (@@server_id, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)));
