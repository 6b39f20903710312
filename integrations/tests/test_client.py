"""integrations.client against a live `rlsearch serve` and a scripted proxy."""

import copy
import pickle
import unittest

from integrations.client import PATH_EXECUTE, Client, RequestError, ServiceError, UnavailableError, base_url
from integrations.localserver import free_port
from integrations.tests.support import FlakyProxy, RecordingSleep, server

PROGRAM = {"id": "a", "question": "who directed the informant", "code": "print(sparse(question, k=2))"}


def client(url, **kw):
    kw.setdefault("jitter", 0.0)
    c = Client(url, **kw)
    c._sleep = RecordingSleep()
    _made.append(c)
    return c


_made = []


def tearDownModule():
    for c in _made:
        c.close()


class BaseURLTest(unittest.TestCase):
    def test_table(self):
        for give, want in [
            ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
            ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
            ("http://127.0.0.1:8000/retrieve", "http://127.0.0.1:8000"),
            ("http://h:1/v1/programs/execute", "http://h:1"),
            ("http://h:1/v1/rewards/search-p1/", "http://h:1"),
            ("https://h/prefix/retrieve", "https://h/prefix"),
            ("http://h:1/prefix", "http://h:1/prefix"),
        ]:
            with self.subTest(give=give):
                self.assertEqual(base_url(give), want)

    def test_bad(self):
        for bad in ["", "   ", "127.0.0.1:8000", "ftp://h/x", None, 3]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                base_url(bad)

    def test_bad_params_name_the_parameter(self):
        for kw, name in [({"timeout": 0}, "timeout"), ({"timeout": -1}, "timeout"), ({"max_retries": -1}, "max_retries"),
                         ({"max_retries": 1.5}, "max_retries"), ({"backoff": "x"}, "backoff"), ({"jitter": -0.1}, "jitter")]:
            with self.subTest(kw=kw):
                with self.assertRaisesRegex(ValueError, name):
                    Client("http://127.0.0.1:1", **kw)


class LiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server()

    def test_success(self):
        c = client(self.srv.url + "/retrieve")
        res, info = c.execute([PROGRAM, dict(PROGRAM, id="b", code="print(sparse(question, k=1))")])
        self.assertEqual([r["id"] for r in res], ["a", "b"])
        self.assertIn('Doc 1(Title: "The Informant!")', res[0]["observation"])
        self.assertEqual(len(res[0]["printed_ids"]), 2)
        self.assertEqual((info.attempts, info.status), (1, 200))
        self.assertEqual(c._sleep.delays, [])

    def test_4xx_is_not_retried_and_names_the_field(self):
        with FlakyProxy(self.srv.url) as p:
            c = client(p.url)
            with self.assertRaises(RequestError) as cm:
                c.execute([dict(PROGRAM, budgets={"max_steps": -1})])
            self.assertEqual(cm.exception.status, 400)
            self.assertEqual(cm.exception.field, "programs[0].budgets.max_steps")
            self.assertEqual(p.total(), 1, "a 4xx must not be retried")
            self.assertEqual(c._sleep.delays, [])

    def test_503_twice_then_ok_backs_off_exponentially(self):
        with FlakyProxy(self.srv.url, script=[503, 503]) as p:
            c = client(p.url, backoff=0.5, max_backoff=8)
            res, info = c.execute([PROGRAM])
            self.assertEqual(res[0]["code"], "ok")
            self.assertEqual(info.attempts, 3)
            self.assertEqual(p.counts[PATH_EXECUTE], 3)
            self.assertEqual(c._sleep.delays, [0.5, 1.0])

    def test_retry_after_and_cap(self):
        with FlakyProxy(self.srv.url, script=[(429, {"Retry-After": "0.25"}, None), 500, 502, 500]) as p:
            c = client(p.url, backoff=1, max_backoff=2.5)
            res, info = c.execute([PROGRAM])
            self.assertEqual(info.attempts, 5)
            self.assertEqual(c._sleep.delays, [0.25, 2.0, 2.5, 2.5], "Retry-After on 429, then 2**i capped")

    def test_5xx_until_retries_run_out(self):
        with FlakyProxy(self.srv.url, script=[500] * 10) as p:
            c = client(p.url, max_retries=3)
            with self.assertRaises(UnavailableError) as cm:
                c.execute([PROGRAM])
            self.assertEqual((cm.exception.attempts, cm.exception.status), (4, 500))
            self.assertIn("scripted 500", str(cm.exception))
            self.assertEqual(p.total(), 4)

    def test_connection_refused_then_up(self):
        port = free_port()
        proxy = FlakyProxy(self.srv.url, port=port)
        c = client(f"http://127.0.0.1:{port}", backoff=0.1)
        c._sleep = RecordingSleep(on_first=proxy.start)  # the server comes up during the first back-off
        try:
            res, info = c.execute([PROGRAM])
        finally:
            proxy.stop()
        self.assertEqual(info.attempts, 2)
        self.assertEqual(res[0]["code"], "ok")

    def test_connection_refused_forever(self):
        c = client(f"http://127.0.0.1:{free_port()}", max_retries=2)
        with self.assertRaises(UnavailableError) as cm:
            c.execute([PROGRAM])
        self.assertEqual(cm.exception.attempts, 3)
        self.assertIsNone(cm.exception.status)

    def test_2xx_without_json(self):
        with FlakyProxy(self.srv.url, script=[(200, {}, b"not json")]) as p:
            with self.assertRaisesRegex(ServiceError, "not JSON"):
                client(p.url).execute([PROGRAM])

    def test_wrong_result_count(self):
        with FlakyProxy(self.srv.url, transform=lambda path, body: {"results": []}) as p:
            with self.assertRaisesRegex(ServiceError, "want 1 results"):
                client(p.url).execute([PROGRAM])

    def test_copy_and_pickle_after_use(self):
        c = Client(self.srv.url)
        c.execute([PROGRAM])
        for c2 in (copy.deepcopy(c), pickle.loads(pickle.dumps(c))):
            res, _ = c2.execute([PROGRAM])
            self.assertEqual(res[0]["code"], "ok")
            c2.close()
        c.close()


if __name__ == "__main__":
    unittest.main()
