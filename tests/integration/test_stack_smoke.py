"""Smoke test of the test stack itself: MariaDB, worker and nginx come up and answer."""

import re
import unittest

from harness import Stack


class StackSmokeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = Stack()

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    def test_unknown_path_is_a_json_404_from_nginx(self):
        r = self.stack.get("/nope")
        self.assertEqual(r.status, 404)
        self.assertEqual(r.headers["Content-Type"], "application/json; charset=utf-8")
        body = r.json()
        request_id = r.headers["X-Request-Id"]
        self.assertRegex(request_id, re.compile(r"^[0-9a-f]{32}$"))
        self.assertEqual(body, {"error": {"code": "not_found",
                                          "message": "No such endpoint",
                                          "request_id": request_id}})

    def test_the_stack_runs_nginx_as_shipped_with_its_cache(self):
        # The harness's default is the configuration the .deb installs: the cache on.
        first, second = self.stack.get("/v1/networks"), self.stack.get("/v1/networks")
        self.assertEqual((first.status, second.status), (200, 200))
        self.assertEqual((first.headers["X-Cache-Status"], second.headers["X-Cache-Status"]),
                         ("MISS", "HIT"))
        self.assertEqual(first.body, second.body)

    def test_database_answers(self):
        self.assertEqual(self.stack.sql("SELECT 1"), [["1"]])


if __name__ == "__main__":
    unittest.main()
