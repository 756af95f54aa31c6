"""The crash tripwire itself (tripwire.py): that it fails a test for each kind of line it is
there for, lets through only what is allowed, and sees real crashes of the stack's processes.
A tripwire that matched nothing would let every other test pass beside a dying process."""

import os
import signal
import tempfile
import unittest
from pathlib import Path

from harness import Stack, await_true
from tripwire import Tripwire, TripwireError


class Logs(unittest.TestCase):
    """A tripwire over two files this test writes."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.nginx = Path(self.dir.name) / "error.log"
        self.worker = Path(self.dir.name) / "worker.log"
        self.tripwire = Tripwire("test")
        self.tripwire.watch(self.nginx)
        self.tripwire.watch(self.worker)

    def tearDown(self):
        self.tripwire.close()
        self.dir.cleanup()

    def write(self, path, text):
        with open(path, "a") as f:
            f.write(text)

    def test_each_fatal_kind_is_reported_once(self):
        lines = ['2026/11/27 10:00:00 [alert] 7#7: worker process 8 exited on signal 6\n',
                 '2026/11/27 10:00:00 [crit] 7#7: *1 connect() to unix:/x failed\n',
                 '2026/11/27 10:00:00 [emerg] 7#7: bind() failed\n',
                 "nginx: spool.c:479: spool_fetch_msg: Assertion `0' failed.\n"]
        self.write(self.nginx, "2026/11/27 10:00:00 [error] 7#7: an ordinary error\n" +
                   "".join(lines))
        self.write(self.worker, "connector-worker: worker process 9 killed by Aborted\n")
        self.assertEqual(self.tripwire.problems(),
                         [f"{self.nginx}: {line.rstrip()}" for line in lines] +
                         [f"{self.worker}: connector-worker: worker process 9 killed by Aborted"])
        self.assertEqual(self.tripwire.problems(), [])

    def test_a_line_is_read_once_whole(self):
        self.write(self.nginx, "[alert] half a li")
        self.assertEqual(self.tripwire.problems(), [])
        self.write(self.nginx, "ne\n")
        self.assertEqual(self.tripwire.problems(), [f"{self.nginx}: [alert] half a line"])

    def test_a_replaced_log_is_read_from_its_start(self):
        self.write(self.nginx, "[error] before\n")
        self.assertEqual(self.tripwire.problems(), [])
        self.nginx.unlink()
        self.write(self.nginx, "[alert] after\n")
        self.assertEqual(self.tripwire.problems(), [f"{self.nginx}: [alert] after"])

    def test_the_harmless_line_only_under_the_cache(self):
        harmless = '[crit] 7#7: unlink() "/tmp/s/nginx/cache/3/ab/cd" failed (2: No such file or directory)'
        other = '[crit] 7#7: unlink() "/tmp/s/nginx/x.sock" failed (2: No such file or directory)'
        self.write(self.nginx, f"{harmless}\n{other}\n")
        self.assertEqual(self.tripwire.problems(), [f"{self.nginx}: {other}"])

    def test_expect_allows_as_many_lines_as_it_says(self):
        self.tripwire.expect("killed by Killed", "killed here", times=1)
        self.write(self.worker, "worker process 9 killed by Killed\n")
        self.assertEqual(self.tripwire.problems(), [])
        self.write(self.worker, "worker process 10 killed by Killed\n")
        self.assertEqual(self.tripwire.problems(),
                         [f"{self.worker}: worker process 10 killed by Killed"])

    def test_expecting_allows_until_its_block_ends(self):
        with self.tripwire.expecting(r"\[crit\] .*subscribe\.sock", "restarting"):
            for n in range(3):
                self.write(self.nginx, f"[crit] {n} connect() to unix:/e/subscribe.sock failed\n")
        self.write(self.nginx, "[crit] 4 connect() to unix:/e/subscribe.sock failed\n")
        self.assertEqual(self.tripwire.problems(),
                         [f"{self.nginx}: [crit] 4 connect() to unix:/e/subscribe.sock failed"])

    def test_a_line_outside_the_block_found_at_its_end_is_still_reported(self):
        with self.tripwire.expecting("subscribe", "restarting"):
            self.write(self.nginx, "[alert] worker process 8 exited on signal 11\n")
        self.assertEqual(self.tripwire.problems(),
                         [f"{self.nginx}: [alert] worker process 8 exited on signal 11"])

    def test_the_hook_fails_the_test_beside_which_a_line_came(self):
        nginx = self.nginx

        class Beside(unittest.TestCase):
            def test_quiet(self):
                pass

            def test_crash(self):
                with open(nginx, "a") as f:
                    f.write("[alert] worker process 8 exited on signal 9\n")

        result = unittest.TestResult()
        unittest.defaultTestLoader.loadTestsFromTestCase(Beside).run(result)
        self.assertEqual(result.testsRun, 2)
        self.assertEqual([test.id().rsplit(".", 1)[1] for test, _ in result.failures],
                         ["test_crash"])
        self.assertIn(TripwireError.__name__, result.failures[0][1])
        self.assertIn("exited on signal 9", result.failures[0][1])


class RealCrashes(unittest.TestCase):
    """The lines real crashes make, as the stack's tripwire reads them: a test that reads them
    itself (problems()) takes them from the check that follows it."""

    @classmethod
    def setUpClass(cls):
        cls.stack = Stack()

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    def found(self, what):
        lines = []
        await_true(lambda: lines.extend(self.stack.tripwire.problems()) or
                   any(what in line for line in lines), what=what)
        return lines

    def test_a_worker_process_killed_by_a_signal(self):
        processes = self.stack.worker_children()
        victim = processes[0]
        os.kill(victim, signal.SIGKILL)
        lines = self.found(f"worker process {victim} killed by Killed")
        self.assertEqual(len(lines), 1, lines)
        self.assertTrue(lines[0].startswith(f"{self.stack.worker_log}: "), lines)
        await_true(lambda: victim not in self.stack.worker_children() and
                   len(self.stack.worker_children()) == len(processes), what="it replaced")

    def test_an_nginx_worker_that_aborts(self):
        master = self.stack.nginx_pid()
        victim = int(Path(f"/proc/{master}/task/{master}/children").read_text().split()[0])
        os.kill(victim, signal.SIGABRT)
        lines = self.found(f"worker process {victim} exited on signal 6")
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("[alert]", lines[0])
        self.assertEqual(self.stack.get("/v1/networks").status, 200)


if __name__ == "__main__":
    unittest.main()
