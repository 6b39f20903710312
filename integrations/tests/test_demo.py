"""The README's demo (integrations/demo.py) runs end to end on the live server."""

import asyncio
import io
import unittest
from contextlib import redirect_stdout

from integrations import demo
from integrations.tests.support import server


class DemoTest(unittest.TestCase):
    def test_demo(self):
        srv = server()
        out = io.StringIO()
        with redirect_stdout(out):
            scores = asyncio.run(demo.run(srv.url, demo.QUESTION_ID))
        text = out.getvalue()
        self.assertEqual([d["score"] for d in scores["qa"]], [1.0, 0.0, 0.0])
        self.assertEqual([d["score"] for d in scores["rpl"]], [1.0, 0.0, 0.0])
        self.assertEqual(scores["rpl"][0]["v_ret"], 1.0)
        self.assertGreater(scores["search-p1"][0]["score"], scores["search-p1"][1]["score"])
        self.assertIn("== calc_reward (V_ret of the printed evidence, gold ['wiki-016830', 'wiki-007345']): 1.0", text)
        self.assertIn("Search-R1 hook: dones=[0, 0, 1] valid_action=[1, 1, 1] is_search=[1, 1, 0]", text)


if __name__ == "__main__":
    unittest.main()
