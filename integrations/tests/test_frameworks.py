"""Every RL framework's search client, unchanged, against a live `rlsearch serve` (stand-ins: frameworks.py).

One server, as a user runs it for all of them at once:

    rlsearch serve --index WIKI --index musique=MUSIQUE --addr 127.0.0.1:P \\
        --listen 127.0.0.1:P1=browsecomp --listen 127.0.0.1:P2=asearcher --reranker CE --rerank-check=false

over BM25 indexes of wiki_multihop and of its MuSiQue passages (CE: a generated random-weight cross-encoder,
so StepSearch's reranked order means nothing, only its shape). Each test drives one client as its framework
does and checks what the model would see, including the error paths; CrossProfileTest checks that each
listener's reply parses under every client exactly where it should.
"""

import json
import os
import subprocess
import tempfile
import unittest

import requests

from integrations.localserver import REPO, LocalServer, binary, data_dir, free_port
from integrations.tests import frameworks as fw
from integrations.tests.support import QWEN3_TOKENIZER, FlakyProxy, RecordingSleep, corpus_path, server

_srv = None
_tmp = None
URLS = {}


def setUpModule():
    global _srv, _tmp
    base = server()  # the shared server's index of wiki_multihop (built once per test process)
    _tmp = tempfile.mkdtemp(prefix="rlsearch-frameworks-")
    musique = os.path.join(_tmp, "musique.jsonl")
    with open(corpus_path(), encoding="utf-8") as f, open(musique, "w", encoding="utf-8") as out:
        for line in f:
            if json.loads(line).get("source") == "musique":
                out.write(line)
    mdir = os.path.join(_tmp, "musique")
    subprocess.run([binary(), "index", "--corpus", musique, "--out", mdir, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    args = ["--index", "musique=" + mdir]
    ce = os.path.join(_tmp, "ce")
    tok = os.path.join(REPO, ".cache", "tokenizers", "bert-uncased.json")
    gen = subprocess.run(["/usr/bin/python3", os.path.join(REPO, "scripts", "gen_bert.py"), "gen", "--preset", "tiny",
                          "--head", "classifier", "--num-labels", "1", "--tokenizer", tok, "--out", ce],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ort = os.environ.get("ONNXRUNTIME_LIB") or os.path.join(REPO, ".cache", "ort", "libonnxruntime.so.1")
    if gen.returncode == 0 and os.path.exists(ort):
        args += ["--reranker", ce, "--rerank-check=false", "--ort-lib", ort]
    elif os.environ.get("RLSEARCH_REQUIRE_NATIVE") == "1":
        raise RuntimeError(f"no cross-encoder for StepSearch's /retrieve/rerank: gen_bert.py rc {gen.returncode} "
                           f"{gen.stderr[-2000:]}, ONNX Runtime at {ort}: {os.path.exists(ort)} (run scripts/setup.sh)")
    if os.path.exists(QWEN3_TOKENIZER):
        args += ["--policy-tokenizer", QWEN3_TOKENIZER]
    p1, p2 = free_port(), free_port()
    args += ["--listen", f"127.0.0.1:{p1}=browsecomp", "--listen", f"127.0.0.1:{p2}=asearcher"]
    _srv = LocalServer(index_dir=base.index_dir, args=args).start()
    URLS.update(default=_srv.url, browsecomp=f"http://127.0.0.1:{p1}", asearcher=f"http://127.0.0.1:{p2}",
                musique=_srv.url + "/c/musique", reranker="--reranker" in args)
    for name in ("browsecomp", "asearcher"):
        requests.get(URLS[name] + "/healthz", timeout=10).raise_for_status()


def tearDownModule():
    if _srv is not None:
        _srv.stop()
    if _tmp:
        subprocess.run(["rm", "-rf", _tmp], check=False)


QUERY = "who directed the informant"


def retrieve(base, queries, topk):
    """Search-R1's reply, for comparison."""
    r = requests.post(base + "/retrieve", json={"queries": queries, "topk": topk, "return_scores": True}, timeout=30)
    r.raise_for_status()
    return r.json()["result"]


def musique_ids():
    with open(corpus_path(), encoding="utf-8") as f:
        return {d["id"] for d in map(json.loads, f) if d.get("source") == "musique"}


class SkyRLTest(unittest.TestCase):
    def test_search(self):
        got = fw.skyrl_search(URLS["default"] + "/retrieve", QUERY, topk=3)
        self.assertEqual(got["status"], "success")
        want = "".join(f"Doc {i + 1}: {d['document']['contents'].strip()}\n" for i, d in enumerate(retrieve(URLS["default"], [QUERY], 3)[0]))
        self.assertEqual(json.loads(got["text"])["result"], want)
        self.assertIn("The Informant!", want)

    def test_retries_5xx_then_answers(self):
        sleep = RecordingSleep()
        with FlakyProxy(URLS["default"], script=[503, 502]) as p:
            got = fw.skyrl_search(p.url + "/retrieve", QUERY, sleep=sleep)
        self.assertEqual(got["status"], "success")
        self.assertEqual(sleep.delays, [1, 2])  # INITIAL_RETRY_DELAY * (attempt + 1)

    def test_4xx_is_the_models_error_text(self):
        # A SkyRL config pointed at a BrowseComp-Plus listener: topk is not BrowseComp's.
        got = fw.skyrl_search(URLS["browsecomp"] + "/retrieve", QUERY)
        self.assertEqual(got["status"], "api_error")
        self.assertIn("400 Client Error", json.loads(got["text"])["result"])


class RLLMTest(unittest.TestCase):
    def test_deepresearch(self):
        got = fw.rllm_deepresearch(URLS["default"], QUERY, top_k=3)
        first = retrieve(URLS["default"], [QUERY], 3)[0][0]
        self.assertTrue(got.startswith(f'<result id="{first["document"]["id"]}" score="{first["score"]:.3f}">\n<title>The Informant!</title>\nThe Informant! is'), got[:200])
        self.assertEqual(got.count("<result "), 3)

    def test_older_examples_search(self):
        self.assertTrue(fw.rllm_search_health(URLS["default"]))
        out, err = fw.rllm_search(URLS["default"], QUERY, top_k=2)
        self.assertIsNone(err)
        ids = [d["document"]["id"] for d in retrieve(URLS["default"], [QUERY], 2)[0]]
        self.assertIn(f"[Document 1] (ID: {ids[0]}, Score:", out)
        self.assertIn(f"[Document 2] (ID: {ids[1]}, Score:", out)

    def test_errors(self):
        got = fw.rllm_deepresearch(URLS["browsecomp"], QUERY, top_k=3)
        self.assertEqual(got, f"Error: All servers failed. Last error: Server {URLS['browsecomp']} returned 400")
        out, err = fw.rllm_search(URLS["browsecomp"], QUERY, top_k=3)
        self.assertIsNone(out)
        self.assertIn('Retrieval server error: 400 - field "top_k" belongs to', err)  # the server's message reaches the model


class ASearcherTest(unittest.TestCase):
    def test_search_then_access(self):
        res = fw.asearcher_query(URLS["asearcher"], [QUERY, "Al-Qaeda"], topk=2)
        self.assertEqual(len(res), 2)
        self.assertEqual(res[0]["urls"][0], "https://en.wikipedia.org/wiki/The_Informant!")
        pages = fw.asearcher_access(URLS["asearcher"], res[1]["urls"] + ["https://en.wikipedia.org/wiki/No_such_page_here"])
        for doc, page in zip(res[1]["documents"], pages):
            title, text = doc.split("\n", 1)
            self.assertTrue(page["page"].startswith(title + "\n"), page["page"][:100])
            self.assertIn(text, page["page"])  # the hit's passage is on its page
        self.assertEqual(pages[-1]["page"], "")  # None for a page the corpus lacks

    def test_access_form_of_its_pages_file(self):
        # ASearcher's own page URLs (tools/local_retrieval_server.py PageAccess, index.php?title= with %20).
        page = fw.asearcher_access(URLS["default"], ["https://en.wikipedia.org/w/index.php?title=Korean%20War"])[0]["page"]
        self.assertTrue(page.startswith('"Korean War"\n'), page[:80])

    def test_without_urls_it_retries_then_dies(self):
        sleep = RecordingSleep()
        with self.assertRaises(fw.ClientError) as ctx:
            fw.asearcher_query(URLS["default"], [QUERY], sleep=sleep)  # a searchr1 listener: no "url"
        self.assertIsInstance(ctx.exception.__cause__, KeyError)
        self.assertEqual(sleep.delays, [10] * 10)


class R1SearcherTest(unittest.TestCase):
    def test_queries(self):
        docs = fw.r1searcher_documents(URLS["default"], [QUERY, "   "], topk=3)
        want = "".join(f"({j + 1}){d['document']['contents']}\n" for j, d in enumerate(retrieve(URLS["default"], [QUERY], 3)[0]))
        self.assertEqual(docs, [want, "None"])

    def test_a_server_per_corpus_is_a_path(self):
        # R1-Searcher starts one server per corpus; here it is /c/musique.
        docs = fw.r1searcher_documents(URLS["musique"], ["capital of the country"], topk=5)
        hits = retrieve(URLS["musique"], ["capital of the country"], 5)[0]
        self.assertTrue(hits and {h["document"]["id"] for h in hits} <= musique_ids())
        self.assertEqual(docs[0], "".join(f"({j + 1}){h['document']['contents']}\n" for j, h in enumerate(hits)))

    def test_error_is_retrieve_error(self):
        self.assertIsNone(fw.r1searcher_documents(URLS["default"], [QUERY], topk=5000))  # over --max-topk: 400


class ReCallTest(unittest.TestCase):
    def test_wikipedia_search(self):
        got = fw.recall_wikipedia_search(URLS["default"], QUERY, top_n=2)
        want = "\n\n".join(d["document"]["contents"] for d in retrieve(URLS["default"], [QUERY], 2)[0])
        self.assertEqual(got, want)
        self.assertEqual(fw.recall_wikipedia_search(URLS["default"], ""), "invalid query")
        self.assertEqual(fw.recall_wikipedia_search(URLS["default"], "   "), "")

    def test_error_body(self):
        # The tool iterates the reply: an error object gives the model "string indices must be integers".
        with self.assertRaisesRegex(TypeError, "string indices must be integers"):
            fw.recall_wikipedia_search(URLS["default"], QUERY, top_n=5000)


class BrowseCompPlusTest(unittest.TestCase):
    def test_search_on_its_listener(self):
        text, docids = fw.browsecomp_search(URLS["browsecomp"], QUERY)
        hits = retrieve(URLS["default"], [QUERY], 5)[0]  # --browsecomp-k 5, BrowseComp-Plus's --k
        self.assertEqual(docids, [h["document"]["id"] for h in hits])
        self.assertTrue(text.startswith("Doc 1(Title: The Informant!) The Informant! is a 2009"), text[:100])

    def test_on_another_listener_it_fails(self):
        self.assertEqual(fw.browsecomp_search(URLS["default"], QUERY), ("Search failed", []))

    def test_mcp(self):
        c = fw.MCPClient(URLS["default"] + "/mcp")
        self.assertEqual(c.initialize()["serverInfo"]["name"], "rlsearch")
        out, is_error = c.tool("search", query=QUERY)
        self.assertFalse(is_error)
        hits = retrieve(URLS["default"], [QUERY], 5)[0]
        run = [{"type": "tool_call", "tool_name": "search", "arguments": {"query": QUERY}, "output": out}]
        self.assertEqual(fw.browsecomp_docids(run), sorted(h["document"]["id"] for h in hits))
        self.assertEqual([h["snippet"] for h in json.loads(out)], [h["document"]["contents"] for h in hits])
        doc, is_error = c.tool("get_document", docid=hits[0]["document"]["id"])
        self.assertFalse(is_error)
        self.assertEqual(json.loads(doc)["text"], hits[0]["document"]["contents"])
        msg, is_error = c.tool("get_document", docid="no-such-id")
        self.assertTrue(is_error)
        self.assertIn("no document", msg)
        obs, is_error = c.tool("execute_program", code="print(sparse(question, k=2))", question=QUERY)
        self.assertFalse(is_error)
        self.assertIn("The Informant!", obs)


class GEMTest(unittest.TestCase):
    def test_msgpack(self):
        got = fw.gem_search(URLS["default"] + "/retrieve", QUERY, topk=3)
        self.assertEqual(got, fw.passages_title_text(retrieve(URLS["default"], [QUERY], 3)[0]))
        self.assertTrue(got.startswith('Doc 1(Title: "The Informant!") The Informant!'))

    def test_error(self):
        got = fw.gem_search(URLS["browsecomp"] + "/retrieve", QUERY)
        self.assertTrue(got.startswith("[SearchTool Error: 400 Client Error"), got)


class StepSearchTest(unittest.TestCase):
    def test_retrieve_is_search_r1(self):
        got = fw.stepsearch_batch_search(URLS["default"] + "/retrieve", [QUERY, "Al-Qaeda"], topk=3)
        want = retrieve(URLS["default"], [QUERY, "Al-Qaeda"], 3)
        self.assertEqual(len(got), 2)
        self.assertIn(f"Doc 1<## Title: {want[0][0]['document']['contents'].split(chr(10))[0]} ##>", got[0])

    def test_rerank(self):
        if not URLS["reranker"]:
            self.skipTest("no cross-encoder (python3-onnx missing)")
        got = fw.stepsearch_batch_search(URLS["default"] + "/retrieve/rerank", [QUERY], topk=3)
        self.assertEqual(got[0].count("<## Title:"), 3)
        r = requests.post(URLS["default"] + "/retrieve/rerank", json={"queries": [QUERY], "topk": 3, "return_scores": True}, timeout=60).json()
        cands = {d["document"]["id"] for d in retrieve(URLS["default"], [QUERY], 10)[0]}  # topk_retrieval 10
        self.assertTrue({d["document"]["id"] for d in r["result"][0]} <= cands)
        scores = [d["score"] for d in r["result"][0]]
        self.assertEqual(scores, sorted(scores, reverse=True))

    def test_rerank_without_a_reranker(self):
        with self.assertRaises(KeyError):  # its client indexes ['result'] of the 404's error body
            fw.stepsearch_batch_search(server().url + "/retrieve/rerank", [QUERY], topk=3)

    def test_train_on_musique_test_on_wiki(self):
        train = fw.stepsearch_batch_search(URLS["musique"] + "/retrieve", ["capital of the country"], topk=3)
        test = fw.stepsearch_batch_search(URLS["default"] + "/retrieve", ["capital of the country"], topk=3)
        self.assertEqual(train[0].count("<## Title:"), 3)
        self.assertEqual(test[0].count("<## Title:"), 3)


def parses(client, base):
    """Whether a client, pointed at a listener, gives the model real passages."""
    try:
        if client == "searchr1":
            out = fw.stepsearch_batch_search(base + "/retrieve", [QUERY], topk=2)
            return "Title: " in out[0]
        if client == "skyrl":
            return fw.skyrl_search(base + "/retrieve", QUERY, topk=2)["status"] == "success"
        if client == "rllm":
            return fw.rllm_deepresearch(base, QUERY, top_k=2).startswith("<result ")
        if client == "rllm-old":
            out, err = fw.rllm_search(base, QUERY, top_k=2)
            return err is None and "[Document 1]" in out
        if client == "gem":
            return fw.gem_search(base + "/retrieve", QUERY, topk=2).startswith("Doc 1(Title:")
        if client == "browsecomp":
            return fw.browsecomp_search(base, QUERY)[0].startswith("Doc 1(Title:")
        if client == "asearcher":
            return bool(fw.asearcher_query(base, [QUERY], topk=2, tries=1)[0]["urls"])
        if client == "r1searcher":
            return fw.r1searcher_documents(base, [QUERY], topk=2)[0].startswith("(1)")
        if client == "recall":
            return fw.recall_wikipedia_search(base, QUERY, top_n=2) != ""
    except (fw.ClientError, KeyError, TypeError, ValueError):
        return False
    raise AssertionError(client)


class CrossProfileTest(unittest.TestCase):
    """Each listener's reply under every client: a client works exactly on the listeners it should."""

    # client -> (searchr1 listener, browsecomp listener, asearcher listener)
    WANT = {
        "searchr1": (True, False, True),     # {"queries"} is refused by name on browsecomp
        "skyrl": (True, False, True),        # topk is not BrowseComp's
        "rllm": (True, False, True),
        "rllm-old": (True, False, True),
        "gem": (True, False, True),
        "browsecomp": (False, True, False),  # the nested reply is not its flat one
        "asearcher": (False, False, True),   # only the asearcher listener gives urls
        "r1searcher": (True, True, True),    # its own path: no collision
        "recall": (True, True, True),
    }

    def test_matrix(self):
        for client, want in self.WANT.items():
            for listener, ok in zip(("default", "browsecomp", "asearcher"), want):
                with self.subTest(client=client, listener=listener):
                    self.assertEqual(parses(client, URLS[listener]), ok)

    def test_unanswered_requests_are_counted(self):
        fw.browsecomp_search(URLS["default"], QUERY)  # SkyRL's dialect to the server: fine
        fw.skyrl_search(URLS["browsecomp"] + "/retrieve", QUERY)  # refused: counted under browsecomp
        metrics = requests.get(URLS["default"] + "/metrics", timeout=10).text
        line = [l for l in metrics.splitlines() if l.startswith('rlsearch_unanswered_requests_total{code="400",dialect="browsecomp",route="/retrieve"}')]
        self.assertTrue(line and float(line[0].split()[-1]) >= 1, line)
        with open(_srv.log_path, encoding="utf-8", errors="replace") as f:
            log = f.read()
        self.assertIn('"msg":"server: unanswered request"', log)
        self.assertIn('"client":"127.0.0.1:', log)


if __name__ == "__main__":
    unittest.main()
