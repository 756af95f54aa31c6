-- 0008: signed webhooks (issue 37): the operator's subscriptions, each one's delivery cursor,
-- the one lease that decides which deliverer of the fleet delivers, the secrets in a database
-- of their own, and a trim of the change feed that keeps what a subscription still has to
-- deliver.
--
-- A subscription follows recipients (history.destination_address) and some record states; the
-- deliverer (connector-webhooks, src/webhooks/) reads the change feed (0006, 0007) after each
-- subscription's cursor and POSTs each change it follows, signed with its secret, one at a
-- time and in seq order. Subscriptions, their addresses and secrets are written by
-- `connector-admin webhook ...` only (the admin account); the deliverer's account
-- (connector_webhooks, sql/accounts-webhooks.sql.in) reads them and writes only the cursors and
-- the lease. docs/schema.md explains each table.

CREATE TABLE webhook_subscriptions (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  -- The receiver, checked by connector-admin (webhooks/receiver_url.h: https, or http to an
  -- allow-listed host) and compared byte for byte.
  url VARCHAR(2048) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  -- Which record states are sent: the history statuses (db/schema_enums.h holds them alike).
  statuses SET('Deposit', 'Pending', 'Confirmed', 'Error') NOT NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 1,
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The recipients a subscription follows. Compared as history's address columns are
-- (ascii_general_ci: any case matches), stored lower-case. The address index is how a change
-- finds the subscriptions that follow its recipient, and how the trim below finds what a
-- subscription loses.
CREATE TABLE webhook_addresses (
  subscription_id BIGINT UNSIGNED NOT NULL,
  address CHAR(42) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  PRIMARY KEY (subscription_id, address),
  KEY ix_webhook_addresses_address (address),
  FOREIGN KEY (subscription_id) REFERENCES webhook_subscriptions (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row per subscription, written by the deliverer (its only writes but the lease's): a
-- queue is a cursor into the shared feed, so a slow receiver holds up its own row only.
-- connector-admin writes a row when it adds the subscription (acked_seq: the end of the feed
-- then, so it is sent the changes from then on) and on `webhook replay` (replay_from_seq, and
-- lost_before_seq back to 0).
CREATE TABLE webhook_queues (
  subscription_id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  -- Every change it follows with seq <= acked_seq was acknowledged (or there was none).
  acked_seq BIGINT UNSIGNED NOT NULL,
  attempt INT UNSIGNED NOT NULL DEFAULT 0,   -- failed attempts of its next change
  retrying_since_us BIGINT NULL,             -- that change's first failed attempt (unix µs)
  failing_since_us BIGINT NULL,              -- set once it has failed for 24 h; a 2xx clears it
  -- > 0: changes up to this seq that it follows and had not acknowledged were trimmed from the
  -- feed (below), so they were never delivered: loud (metric, alert, `webhook list`).
  lost_before_seq BIGINT UNSIGNED NOT NULL DEFAULT 0,
  -- `webhook replay --since SEQ`: the deliverer sends again every change it follows with
  -- seq >= SEQ, then clears it.
  replay_from_seq BIGINT UNSIGNED NULL,
  delivered BIGINT UNSIGNED NOT NULL DEFAULT 0,  -- acknowledged deliveries, all time
  retried BIGINT UNSIGNED NOT NULL DEFAULT 0,    -- failed attempts, all time
  last_status VARCHAR(64) CHARACTER SET ascii NULL,  -- "200", "timeout", "refused address", ...
  last_attempt_us BIGINT NULL,
  FOREIGN KEY (subscription_id) REFERENCES webhook_subscriptions (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row: which deliverer of the fleet delivers. A row on the primary rather than GET_LOCK:
-- a stopped (SIGSTOP) holder keeps its connection, and with it a lock, for ever; a lease it
-- does not renew expires on the server's clock. token grows at each takeover, and the holder's
-- writes to the queues are conditioned on it, so a holder that lost the lease without knowing
-- it writes nothing.
CREATE TABLE webhook_lease (
  id TINYINT UNSIGNED NOT NULL PRIMARY KEY,
  holder VARCHAR(255) NOT NULL DEFAULT '',   -- "hostname pid"
  token BIGINT UNSIGNED NOT NULL DEFAULT 0,
  expires_us BIGINT NOT NULL DEFAULT 0       -- the server's clock, unix µs
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

INSERT INTO webhook_lease (id) VALUES (1);

-- The secrets, in a second database, <db>_secrets (connector_secrets for connector): the read
-- account has SELECT on the whole service database (so a table a migration adds needs no new
-- grant), and MariaDB cannot deny one table of a database granted whole. Only the admin
-- account and the deliverer's (SELECT on this one table) can read it. No foreign key across
-- the databases: `connector-admin webhook add` and `remove` write both in one transaction.
-- scripts/migrate runs this file in the service database, so the name is made from DATABASE()
-- (scripts/migrate allows only [A-Za-z0-9_] in it).
SET @connector_secrets_db = CONCAT('`', DATABASE(), '_secrets`');
SET @connector_statement = CONCAT('CREATE DATABASE IF NOT EXISTS ', @connector_secrets_db,
                                  ' CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci');
PREPARE connector_statement FROM @connector_statement;
EXECUTE connector_statement;
SET @connector_statement = CONCAT('CREATE TABLE ', @connector_secrets_db, '.webhook_secrets (',
  'subscription_id BIGINT UNSIGNED NOT NULL PRIMARY KEY, ',
  'secret VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL',
  ') ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci');
PREPARE connector_statement FROM @connector_statement;
EXECUTE connector_statement;
DEALLOCATE PREPARE connector_statement;

-- The trim of the change feed, replacing 0006's event: the rule now also keeps what an enabled
-- subscription has still to deliver, and says loudly what a subscription lost.
--
-- * Changes older than a day go, as before, except those an ENABLED subscription has not
--   acknowledged (seq above its cursor), which are held for up to 7 days: a receiver down for a
--   weekend still gets every change when it is back. A disabled subscription holds nothing.
--   A subscription's cursor is its acked_seq, or the seq before a replay it has been asked for
--   and not applied yet (replay_from_seq - 1), whichever is lower.
-- * Past 7 days they go anyway. Before any change goes, every subscription (enabled or not)
--   whose cursor is below a trimmed change it follows (its addresses are the change's
--   destination_address, its statuses hold the change's status) gets
--   lost_before_seq = GREATEST(lost_before_seq, that change's seq): what it lost is in the
--   database, in `connector-admin webhook list` and in the deliverer's metrics.
-- * The feed is trimmed from its start, so what it holds stays a whole range of seq: a change
--   goes when every change before it goes too. The rules above decide a seq to trim up to
--   (changed_us grows with seq, as both are taken when a change is written, but for a step of
--   the server's clock), and the feed is deleted up to it in batches of 100,000 (the event
--   runs every minute), as 0006 did.
-- * Losses and deletes of a batch are one transaction. The cursors are read without locking
--   them, so the deliverer is never held up by the trim: a cursor that moves on meanwhile only
--   makes the trim keep more, or mark a change lost that the deliverer sent in that moment
--   (loud rather than silent).
--
-- A procedure, so that an operator (or a test) can run a trim at once:
-- CALL history_changes_trim_now(). It does nothing where the server is read_only (a replica:
-- replication deletes the primary's rows there).
DROP EVENT IF EXISTS history_changes_trim;

DELIMITER //
CREATE PROCEDURE history_changes_trim_now()
BEGIN
  DECLARE now_us BIGINT DEFAULT UNIX_TIMESTAMP() * 1000000;
  DECLARE held_up_to BIGINT UNSIGNED;   -- the lowest cursor of an enabled subscription
  DECLARE day_old BIGINT UNSIGNED;      -- the newest change older than a day
  DECLARE week_old BIGINT UNSIGNED;     -- the newest change older than 7 days
  DECLARE trim_to BIGINT UNSIGNED;      -- the feed goes up to this seq
  DECLARE batch_end BIGINT UNSIGNED;    -- this round goes up to this seq
  DECLARE lost_subscription BIGINT UNSIGNED;
  DECLARE lost_seq BIGINT UNSIGNED;
  DECLARE no_more INT DEFAULT 0;
  -- Per subscription whose cursor is below the batch's end: the last change of the batch it
  -- follows and had not acknowledged. Through ix_webhook_addresses (per subscription) and
  -- ix_history_changes_destination_address (its address, then seq).
  DECLARE losses CURSOR FOR
    SELECT q.subscription_id, MAX(c.seq)
    FROM webhook_queues q
    JOIN webhook_subscriptions s ON s.id = q.subscription_id
    JOIN webhook_addresses a ON a.subscription_id = q.subscription_id
    JOIN history_changes c ON c.destination_address = a.address
    WHERE LEAST(q.acked_seq, COALESCE(GREATEST(q.replay_from_seq, 1) - 1, q.acked_seq))
          < batch_end
      AND c.seq > LEAST(q.acked_seq, COALESCE(GREATEST(q.replay_from_seq, 1) - 1, q.acked_seq))
      AND c.seq <= batch_end
      AND FIND_IN_SET(c.status, s.statuses) > 0
    GROUP BY q.subscription_id;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET no_more = 1;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF @@global.read_only = 0 THEN
    START TRANSACTION;
    SET held_up_to = (
      SELECT MIN(LEAST(q.acked_seq, COALESCE(GREATEST(q.replay_from_seq, 1) - 1, q.acked_seq)))
      FROM webhook_queues q JOIN webhook_subscriptions s ON s.id = q.subscription_id
      WHERE s.enabled = 1);
    SET day_old = (SELECT seq FROM history_changes WHERE changed_us < now_us - 86400000000
                   ORDER BY changed_us DESC LIMIT 1);
    SET week_old = (SELECT seq FROM history_changes WHERE changed_us < now_us - 604800000000
                    ORDER BY changed_us DESC LIMIT 1);
    SET trim_to = GREATEST(COALESCE(LEAST(day_old, COALESCE(held_up_to, day_old)), 0),
                           COALESCE(week_old, 0));
    SET batch_end = (SELECT MAX(seq) FROM (SELECT seq FROM history_changes WHERE seq <= trim_to
                                           ORDER BY seq LIMIT 100000) AS batch);
    IF batch_end IS NOT NULL THEN
      SET no_more = 0;
      OPEN losses;
      mark: LOOP
        FETCH losses INTO lost_subscription, lost_seq;
        IF no_more THEN
          LEAVE mark;
        END IF;
        UPDATE webhook_queues SET lost_before_seq = GREATEST(lost_before_seq, lost_seq)
          WHERE subscription_id = lost_subscription;
      END LOOP;
      CLOSE losses;
      DELETE FROM history_changes WHERE seq <= batch_end;
    END IF;
    COMMIT;
  END IF;
END//

CREATE EVENT history_changes_trim
  ON SCHEDULE EVERY 1 MINUTE
  ON COMPLETION PRESERVE
  ENABLE
  COMMENT 'connector: trims the change feed (sql/migrations/0008)'
DO
BEGIN
  -- A trim that cannot take its row locks within a second waits for the next minute rather
  -- than queue behind a stuck transaction.
  SET SESSION innodb_lock_wait_timeout = 1;
  CALL history_changes_trim_now();
END//
DELIMITER ;
