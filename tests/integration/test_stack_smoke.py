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

    def test_no_cache_status_where_the_cache_is_off(self):
        # This stack's nginx has its cache off (the harness's default): the answer carries no
        # X-Cache-Status, as docs/operations.md says (nginx sends no header with an empty value).
        r = self.stack.get("/v1/networks")
        self.assertEqual(r.status, 200)
        self.assertNotIn("X-Cache-Status", r.headers)

    def test_database_answers(self):
        self.assertEqual(self.stack.sql("SELECT 1"), [["1"]])


if __name__ == "__main__":
    unittest.main()
