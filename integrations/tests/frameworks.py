"""Stand-ins for the search clients of the RL frameworks rlsearch serves, each mirroring its upstream client.

Every function below rebuilds one client's request exactly as the upstream
code builds it (keys, types, defaults, path, encoding, Content-Type) and parses
the reply exactly as the upstream code parses it (the keys it indexes, the
text it renders for the model, what it does on an error), written here from
reading the upstream file at the commit named, without copying it. The
upstream clients use aiohttp, httpx or msgspec; the stand-ins use requests
and Debian's python3-msgpack, which put the same bytes on the wire. Where a
client sleeps between retries, the stand-in takes a ``sleep`` callable so that
tests can count the retries without waiting.

What each returns is what the model (or the harness) would see, so tests
compare the model's view, not only the JSON.
"""

import json
import re

import msgpack
import requests


class ClientError(Exception):
    """The upstream client would raise (or crash the rollout) here."""


# -- Search-R1's rendering, shared by its descendants --------------------------------------------------------

def passages_title_text(result):
    """The rendering of Search-R1's ``_passages2string`` as GEM and StepSearch keep it: the first line of
    ``document.contents`` is the title (quotes kept), the rest the text."""
    out = ""
    for idx, doc_item in enumerate(result):
        content = doc_item["document"]["contents"]
        title = content.split("\n")[0]
        text = "\n".join(content.split("\n")[1:])
        out += f"Doc {idx + 1}(Title: {title}) {text}\n"
    return out


# -- SkyRL: NovaSky-AI/SkyRL @ a956457, skyrl-gym/skyrl_gym/tools/search.py --------------------------------

def skyrl_search(url, query, topk=3, sleep=None, max_retries=10):
    """SearchToolGroup.search (L181-254) over call_search_api (L20-129).

    Request (L48-49): POST url, JSON {"query", "topk", "return_scores": True}, Accept application/json.
    5xx in (500, 502, 503, 504) is retried MAX_RETRIES = 10 times, sleeping INITIAL_RETRY_DELAY * (attempt + 1)
    (L73-80); any other HTTP error stops at raise_for_status (L83, L111-113). Reply (L222-235): for each
    ``retrieval`` in ``result``, ``_passages2string`` (L132-137: ``"Doc {i}: " + document.contents.strip()``),
    joined with "\\n---\\n"; the tool returns json.dumps({"result": text}). Errors become the model's text
    "Search error: ..." (L213-216) or "Error processing search results: ..." (L244-248).
    """
    payload = {"query": query.strip(), "topk": topk, "return_scores": True}
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    error = None
    api_response = None
    for attempt in range(max_retries):
        try:
            r = requests.post(url, headers=headers, json=payload, timeout=30)
        except requests.ConnectionError as e:
            error = f"Connection Error: {e}"
            if sleep and attempt < max_retries - 1:
                sleep(1 * (attempt + 1))
            continue
        if r.status_code in (500, 502, 503, 504):
            error = f"API Request Error: Server Error ({r.status_code}) on attempt {attempt + 1}/{max_retries}"
            if sleep and attempt < max_retries - 1:
                sleep(1 * (attempt + 1))
            continue
        try:
            r.raise_for_status()
            api_response, error = r.json(), None
        except requests.RequestException as e:
            error = f"API Request Error: {e}"
        except ValueError as e:
            error = f"API Response JSON Decode Error: {e}"
        break
    if error:
        return {"status": "api_error", "text": json.dumps({"result": f"Search error: {error}"})}
    try:
        raw_results = api_response.get("result", [])
        if not raw_results:
            return {"status": "no_results", "text": json.dumps({"result": "No search results found."})}
        pretty = []
        for retrieval in raw_results:
            ref = ""
            for idx, doc_item in enumerate(retrieval):
                ref += f"Doc {idx + 1}: {doc_item['document']['contents'].strip()}\n"
            pretty.append(ref)
        return {"status": "success", "text": json.dumps({"result": "\n---\n".join(pretty)})}
    except Exception as e:  # noqa: BLE001 - SkyRL catches everything here (L244)
        return {"status": "processing_error", "text": json.dumps({"result": f"Error processing search results: {e}"})}


# -- rLLM: rllm-org/rllm @ 9beb6e0, examples/fully_async/deepresearch/tool.py --------------------------------

def rllm_deepresearch(base_url, query, top_k=None, max_results=10, max_content_length=300):
    """LocalRetrievalTool.run (L229-292), format_style "concise" (the default, L22).

    Request (L241-242, L259): POST {base_url}/retrieve, JSON {"query", "top_k": min(top_k or max_results, 50)}.
    A non-2xx reply is "Server {url} returned {status}" (L261-263), and after the last server
    "Error: All servers failed. Last error: ..." (L285-288). Reply (L265-272): ``results``; each result's
    ``id``, ``score`` and ``content`` (L205-207); a string content starting with '"' has its title cut out
    (_extract_content, L171-190) and the text truncated to max_content_length (L192-197); rendered as
    ``<result id=".." score="%.3f">\\n<title>T</title>\\nTEXT\\n</result>`` joined by blank lines (L216-227).
    """
    top_k = top_k or max_results
    payload = {"query": query, "top_k": min(top_k, 50)}
    try:
        r = requests.post(f"{base_url.rstrip('/')}/retrieve", json=payload, timeout=30)
        if not r.ok:
            return f"Error: All servers failed. Last error: Server {base_url} returned {r.status_code}"
        results = r.json().get("results", [])
    except Exception as e:  # noqa: BLE001 - tool.py L281-283
        return f"Error: All servers failed. Last error: Error on {base_url}: {e}"
    if not results:
        return "No relevant documents found for the query."
    out = []
    for i, result in enumerate(results[:max_results], 1):
        doc_id = result.get("id", f"doc_{i}")
        score = result.get("score", 0.0)
        content = result.get("content", "")
        if isinstance(content, dict):
            text = content.get("contents", content.get("content", str(content)))
        else:
            text = content
        title = ""
        if text.startswith('"'):
            end = text.find('"', 1)
            if end > 0:
                title, text = text[1:end], text[end + 1:].lstrip('\n "')
        text = text.replace('""', '"').strip()
        if len(text) > max_content_length:
            text = text[:max_content_length] + "..."
        if title:
            out.append(f'<result id="{doc_id}" score="{score:.3f}">\n<title>{title}</title>\n{text}\n</result>')
        else:
            out.append(f'<result id="{doc_id}" score="{score:.3f}">\n{text}\n</result>')
    return "\n\n".join(out)


# -- rLLM's older client: rllm-org/rllm @ c838218, examples/search/local_retrieval_tool.py --------------------

def rllm_search_health(base_url):
    """LocalRetrievalTool._test_connection (L57-66): GET {base_url}/health, 200 means connected."""
    return requests.get(f"{base_url.rstrip('/')}/health", timeout=30).status_code == 200


def rllm_search(base_url, query, top_k=None, max_results=10):
    """LocalRetrievalTool.forward (L108-163).

    Request (L121-130): POST {base_url}/retrieve, JSON {"query", "top_k": min(top_k or max_results, 50)}.
    A non-2xx reply is the error "Retrieval server error: {status} - {error}" with the JSON body's "error"
    (L132-141). Reply (L143-151): ``results``, each read as ``document.id``, ``document.contents`` and
    ``score`` (L93-97), contents cut at 300 characters, rendered "[Document i] (ID: .., Score: %.3f)\\n..."
    (L99-106). Returns (output, error) as its ToolOutput does.
    """
    top_k = top_k or max_results
    r = requests.post(f"{base_url.rstrip('/')}/retrieve", json={"query": query, "top_k": min(top_k, 50)}, timeout=30)
    if not r.ok:
        msg = f"Retrieval server error: {r.status_code}"
        if r.content:
            try:
                msg += f" - {r.json().get('error', 'Unknown error')}"
            except ValueError:
                msg += f" - {r.text}"
        return None, msg
    results = r.json().get("results", [])
    if not results:
        return "No relevant documents found for the query.", None
    out = []
    for i, result in enumerate(results[:max_results], 1):
        doc_id = result.get("document", {}).get("id", f"doc_{i}")
        content = result.get("document", {}).get("contents", "")
        score = result.get("score", 0.0)
        if len(content) > 300:
            content = content[:300] + "..."
        out.append(f"[Document {i}] (ID: {doc_id}, Score: {score:.3f})\n{content}\n")
    return "\n".join(out), None


# -- ASearcher / AReaL / RLinf: inclusionAI/ASearcher @ 813e804, tools/search_utils.py -----------------------

def asearcher_query(base_url, queries, topk=3, sleep=None, tries=10):
    """AsyncSearchBrowserClient.query_async (L60-87), with the request of the module's __main__ (L375-379).

    Request: POST {base_url}/retrieve, JSON {"queries", "topk", "return_scores": False}. raise_for_status
    (L71); reply (L72-79): for each query's ``result`` list, documents = [r["contents"]], urls = [r["url"]].
    Any exception (a 4xx, a KeyError on "url") is retried, 10 tries with asyncio.sleep(10) between (L63-85),
    then RuntimeError("Fail to post search query to RAG server").
    """
    last = None
    for _ in range(tries):
        try:
            r = requests.post(f"{base_url}/retrieve", json={"queries": queries, "topk": topk, "return_scores": False}, timeout=120)
            r.raise_for_status()
            res = r.json()
            return [dict(documents=[d["contents"] for d in result], urls=[d["url"] for d in result],
                         server_type="async-search-browser") for result in res["result"]]
        except Exception as e:  # noqa: BLE001 - search_utils.py L80
            last = e
            if sleep:
                sleep(10)
    raise ClientError("Fail to post search query to RAG server") from last


def asearcher_access(base_url, urls, sleep=None, tries=10):
    """AsyncSearchBrowserClient.access_async (L89-116): POST {base_url}/access, JSON {"urls"}; raise_for_status;
    for each ``result``: page = result["contents"] if result is not None else "" (L102-108); retried as above."""
    last = None
    for _ in range(tries):
        try:
            r = requests.post(f"{base_url}/access", json={"urls": urls}, timeout=120)
            r.raise_for_status()
            return [dict(page=res["contents"] if res is not None else "", type="access", server_type="async-search-browser")
                    for res in r.json()["result"]]
        except Exception as e:  # noqa: BLE001
            last = e
            if sleep:
                sleep(10)
    raise ClientError("Fail to post access request to RAG server") from last


# R1-Searcher's passages may start with their numeric id (a TSV line); its client strips it (L278).
LEADING_ID = re.compile(r"^\d+\s+")


# -- R1-Searcher: RUCAIBox/R1-Searcher @ 631167c, evaluation/eval_search_loacl.py ----------------------------

def r1searcher_documents(base_url, query_list, topk):
    """The retrieval step of the evaluation loop (L266-296).

    Request (L266-268): POST {base}/queries, JSON {"queries", "k": topk}. On 200 (L269-271) ``answers[i]`` are
    passage strings; each has a leading numeric id stripped (re.sub(r'^\\d+\\s+', '', doc), L278) and is
    rendered "({j+1}){doc}\\n" (L279); no passages render "None" (L282-283). Any other status marks every
    question "retrieve_error" (L287-296). Returns one <|begin_of_documents|> body per query, or None.
    """
    r = requests.post(f"{base_url}/queries", json={"queries": query_list, "k": topk}, timeout=60)
    if r.status_code != 200:
        return None
    out = []
    for docs in r.json()["answers"]:
        if docs:
            out.append("".join(f"({j + 1}){LEADING_ID.sub('', d)}\n" for j, d in enumerate(docs)))
        else:
            out.append("None")
    return out


# -- ReCall: Agent-RL/ReCall @ aaf16b3, data/prepare_musique_recall.py (the wikipedia_search tool, L9-24) -------

def recall_wikipedia_search(base_url, query, top_n=5):
    """The sandboxed wikipedia_search the policy calls.

    '' is 'invalid query' without a request (L14-15); otherwise POST {base}/search, JSON {"query", "top_n"}
    (L17-18), and for each ``line`` of the JSON reply (a bare list) ``line['contents']`` joined by blank lines
    (L19-24). An error body (an object) makes the loop iterate its keys: a TypeError the model sees.
    """
    if query == "":
        return "invalid query"
    r = requests.post(f"{base_url}/search", json={"query": query, "top_n": top_n}, timeout=60)
    text = ""
    for line in r.json():
        text += f"{line['contents']}\n\n"
    return text.strip()


# -- BrowseComp-Plus: texttron/BrowseComp-Plus @ 97c637c, search_agent/search_r1_client.py -------------------

def browsecomp_search(base_url, query):
    """search (L105-127): POST {base}/retrieve, JSON {"query"} (k is the server's), .json()["result"]; each
    doc_item's document.title and document.text render "Doc {i}(Title: T) X\\n" and its ``docid`` is kept;
    any exception is ("Search failed", [])."""
    try:
        results = requests.post(f"{base_url}/retrieve", json={"query": query}, timeout=60).json()["result"]
        ref = ""
        for idx, doc_item in enumerate(results):
            ref += f"Doc {idx + 1}(Title: {doc_item['document']['title']}) {doc_item['document']['text']}\n"
        return ref, [doc_item["docid"] for doc_item in results]
    except Exception:  # noqa: BLE001 - search_r1_client.py L124
        return "Search failed", []


def browsecomp_docids(result):
    """search_agent/utils.py extract_retrieved_docids_from_result (L6-37): the docids of every tool_call of a
    search tool, from its output parsed as a JSON list of {"docid", ...}."""
    ids = set()
    for item in result:
        if item.get("type") != "tool_call":
            continue
        name = str(item.get("tool_name") or "")
        if "search" in name.lower() or "retrieval" in name.lower():
            out = item.get("output")
            parsed = json.loads(out) if isinstance(out, str) else out
            if isinstance(parsed, list):
                ids.update(str(e["docid"]) for e in parsed if isinstance(e, dict) and "docid" in e)
    return sorted(ids)


class MCPClient:
    """The calls an MCP client (fastmcp's Client, qwen-agent, an LLM API's MCP connector) makes to a
    streamable-HTTP server, as BrowseComp-Plus's harness drives searcher/mcp_server.py: initialize,
    notifications/initialized, then tools/call; replies may come as JSON or as server-sent events."""

    def __init__(self, url):
        self.url, self.session, self.next_id = url, None, 1

    def _post(self, msg):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        r = requests.post(self.url, data=json.dumps(msg), headers=headers, timeout=60)
        r.raise_for_status()
        self.session = r.headers.get("Mcp-Session-Id", self.session)
        if "id" not in msg:
            return None
        if r.headers.get("Content-Type", "").startswith("text/event-stream"):
            for line in r.content.decode("utf-8").splitlines():  # event streams are UTF-8 (WHATWG HTML 9.2)
                if line.startswith("data:"):
                    reply = json.loads(line[5:])
                    if reply.get("id") == msg["id"]:
                        return reply
            raise ClientError(f"no reply to {msg['method']} in the event stream: {r.text[:200]}")
        return r.json()

    def call(self, method, params):
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        reply = self._post(msg)
        if "error" in reply:
            raise ClientError(f"{method}: {reply['error']}")
        return reply["result"]

    def initialize(self):
        res = self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "browsecomp-plus-stand-in", "version": "0"}})
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return res

    def tool(self, name, **args):
        """tools/call; returns (text content, is_error)."""
        res = self.call("tools/call", {"name": name, "arguments": args})
        return "".join(c.get("text", "") for c in res.get("content", [])), bool(res.get("isError"))


# -- GEM / ROLL: axon-rl/gem @ 4069f2f, gem/tools/search_tool.py ---------------------------------------------

def gem_search(url, query, topk=3):
    """SearchTool._search (L55-78): POST url with data=msgspec.msgpack.encode({"query", "topk",
    "return_scores": True}) and no Content-Type (L67-73), raise_for_status (L74), the reply decoded as
    MessagePack and its ``result`` (flat: one list for the one query, L75) rendered by _passages2string
    (L80-87); any exception is "[SearchTool Error: ...]" (L77-78)."""
    payload = {"query": query, "topk": topk, "return_scores": True}
    try:
        r = requests.post(url, data=msgpack.packb(payload, use_bin_type=True), timeout=5)
        r.raise_for_status()
        return passages_title_text(msgpack.unpackb(r.content, raw=False)["result"])
    except Exception as e:  # noqa: BLE001
        return f"[SearchTool Error: {e}]"


# -- StepSearch: Zillwang/StepSearch @ 43215ba, search_r1/llm_agent/generation.py (Search-R1's loop) ----------

def stepsearch_batch_search(search_url, queries, topk=3):
    """batch_search and _batch_search (L455-474): POST search_url (retriever.url: /retrieve or
    /retrieve/rerank), JSON {"queries", "topk", "return_scores": True}, then .json()['result'] (a KeyError
    on an error body); each query's list rendered by _passages2string (L476-487): "contents" split into the
    title line and the rest, "Doc {i}<## Title: T ##> X\\n"."""
    results = requests.post(search_url, json={"queries": queries, "topk": topk, "return_scores": True}, timeout=60).json()["result"]
    out = []
    for result in results:
        ref = ""
        for idx, doc_item in enumerate(result):
            if "contents" in doc_item["document"]:
                contents = doc_item["document"]["contents"]
                title, content = contents.split("\n")[0], "\n".join(contents.split("\n")[1:])
            else:
                title, content = doc_item["document"]["title"], doc_item["document"]["content"]
            ref += f"Doc {idx + 1}<## Title: {title} ##> {content}\n"
        out.append(ref)
    return out
