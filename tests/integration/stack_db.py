"""Stack's MariaDB servers (StackDatabase, a part of Stack; harness.py's docstring describes the
options): the primary and the replica started and stopped, SQL as the admin or another account,
and table locks held for a test. Python 3 standard library only."""

import subprocess

from harness_base import ACCOUNTS_ENV, SCRIPTS, StackError, _free_port, _os_user, _run
from waits import wait_for


class StackDatabase:
    """Stack's primary MariaDB and its replica (self.db_dir, self.db_socket, self.db_port,
    self.replica* and self._env() are Stack's)."""

    def _mariadb_options(self):
        options = []
        if self.db_port is not None:
            options += ["--port", self.db_port]
        if self.replica:
            options += ["--server-id", 1, "--log-bin"]
        return options

    def _first_start_mariadb(self):
        if self.db_port != 0:
            self.start_mariadb()
            return
        for attempt in range(3):  # the free port can be taken between picking and binding
            self.db_port = _free_port()
            try:
                self.start_mariadb()
                return
            except StackError:
                if attempt == 2:
                    raise

    def start_mariadb(self):
        """Starts the (primary) MariaDB, or does nothing when it is running."""
        _run([SCRIPTS / "mariadb-start", *self._mariadb_options(), self.db_dir],
             env=self._env(self._mariadb_env))

    def stop_mariadb(self):
        _run([SCRIPTS / "mariadb-stop", self.db_dir])

    def _set_up_replica(self):
        for attempt in range(3):  # the free port can be taken between picking and binding
            self.replica_port = _free_port()
            try:
                _run([SCRIPTS / "mariadb-replica", "--port", self.replica_port, self.replica_dir,
                      self.db_dir, self.db_port], env=self._env(ACCOUNTS_ENV))
                break
            except StackError:
                if attempt == 2:
                    raise
        self.wait_replica_caught_up()

    def start_replica(self):
        """Starts the replica again (scripts/mariadb-start keeps its replica options); it resumes
        replicating by itself. Does not wait for it to catch up: see wait_replica_caught_up()."""
        self._require_replica()
        _run([SCRIPTS / "mariadb-start", self.replica_dir], env=self._env())

    def stop_replica(self):
        self._require_replica()
        _run([SCRIPTS / "mariadb-stop", self.replica_dir])

    def wait_replica_caught_up(self, timeout=30):
        """Waits until the replica has applied everything the primary has logged so far;
        raises StackError (with the replica's own account of why) after timeout seconds."""
        self._require_replica()
        position = self.sql("SELECT @@gtid_binlog_pos")[0][0]
        reached = self.replica_sql(f"SELECT MASTER_GTID_WAIT('{position}', {int(timeout)})")
        if reached != [["0"]]:
            status = _run(["mariadb", "--no-defaults", f"--socket={self.replica_socket}",
                           "-u", _os_user(), "-E", "-e", "SHOW SLAVE STATUS"], timeout=30)
            raise StackError(f"the replica did not reach the primary's GTID {position} within "
                             f"{timeout} s:\n{status.stdout}")

    def _require_replica(self):
        if not self.replica:
            raise StackError("this stack has no replica (Stack(replica=True))")

    def replica_pid(self):
        self._require_replica()
        return int((self.replica_dir / "mysqld.pid").read_text())

    def sql(self, statement):
        """Runs SQL as the MariaDB admin account on database connector (on the primary); returns
        the rows as lists of strings (NULL comes back as "NULL")."""
        return self._admin_sql(self.db_socket, statement)

    def copy_history_row(self, source_id, new_id, new_hash, replica_only=False):
        """Inserts a copy of history row source_id under a new id and hash, on the primary (and
        so, once replicated, everywhere), or with replica_only on the replica alone (the admin
        account may write there despite read_only): a row that shows which server a read
        used."""
        statement = (f"CREATE TEMPORARY TABLE copy AS SELECT * FROM history WHERE id = {source_id}; "
                     f"UPDATE copy SET id = {new_id}, hash = '{new_hash}'; "
                     "INSERT INTO history SELECT * FROM copy; DROP TEMPORARY TABLE copy")
        if replica_only:
            return self.replica_sql("SET SESSION sql_log_bin = 0; " + statement)
        return self.sql(statement)

    def replica_sql(self, statement):
        """sql() on the replica."""
        self._require_replica()
        return self._admin_sql(self.replica_socket, statement)

    @staticmethod
    def _admin_sql(sock, statement):
        result = _run(["mariadb", "--no-defaults", f"--socket={sock}",
                       "-u", _os_user(), "--default-character-set=utf8mb4", "-N", "-B",
                       "connector", "-e", statement], timeout=60)
        return [line.split("\t") for line in result.stdout.splitlines()]

    def sql_as(self, user, password, statement, tcp=False, replica=False):
        """Runs SQL as another account on database connector, over the unix socket or (tcp)
        127.0.0.1:db_port, on the primary or the replica; returns the CompletedProcess (text
        stdout/stderr) without checking it, so tests can look at refusals."""
        if replica:
            self._require_replica()
        if tcp:
            port = self.replica_port if replica else self.db_port
            if port is None:
                raise StackError("the primary listens on TCP only with db_port (or replica)")
            where = ["--protocol=TCP", "--host=127.0.0.1", f"--port={port}"]
        else:
            where = [f"--socket={self.replica_socket if replica else self.db_socket}"]
        return subprocess.run(["mariadb", "--no-defaults", *where, "-u", user,
                               f"--password={password}", "--default-character-set=utf8mb4",
                               "--connect-timeout=10", "-N", "-B", "connector", "-e", statement],
                              capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)

    def db_connections(self, user="connector", replica=False):
        """How many sessions `user` has open on the primary (or the replica)."""
        sql = self.replica_sql if replica else self.sql
        return int(sql("SELECT COUNT(*) FROM information_schema.processlist "
                       f"WHERE user = '{user}'")[0][0])

    def hold_table_lock(self, table, seconds):
        """Test-only slowness: a background admin session holds LOCK TABLES `table` WRITE for
        `seconds`, so statements on it wait. Returns the session's Popen once the lock is held
        (wait() on it to know it is released)."""
        marker = f"SLEEP({float(seconds)})"
        process = subprocess.Popen(
            ["mariadb", "--no-defaults", f"--socket={self.db_socket}", "-u", _os_user(),
             "connector", "-e", f"LOCK TABLES {table} WRITE; SELECT {marker}; UNLOCK TABLES;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        held = False

        def held_or_ended():
            nonlocal held
            held = self.sql("SELECT COUNT(*) FROM information_schema.processlist "
                            f"WHERE info = 'SELECT {marker}'") == [["1"]]
            return held or process.poll() is not None
        # Until the session sleeps holding the lock, or has ended without it (30 s at most).
        if wait_for(held_or_ended, 30, 0.05) and held:
            return process
        process.kill()
        process.wait()
        raise StackError(f"the session locking {table} did not start")

    def release_table_lock(self, process):
        """Ends a hold_table_lock() session now (KILL of its connection takes the lock with it),
        so a test decides when the lock ends instead of racing a fixed duration."""
        for (session,) in self.sql("SELECT id FROM information_schema.processlist "
                                   "WHERE info LIKE 'SELECT SLEEP(%'"):
            self.sql(f"KILL {session}")
        process.wait(timeout=30)

    def lock_waiters(self, user="connector"):
        """How many sessions of `user` wait on a table lock (requests held by hold_table_lock)."""
        return int(self.sql("SELECT COUNT(*) FROM information_schema.processlist WHERE user = "
                            f"'{user}' AND state LIKE 'Waiting for table%lock'")[0][0])
