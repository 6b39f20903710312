import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;

import java.io.BufferedWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * BenchSearch times BM25 top-k search over an index built by BenchIndex on
 * one thread (IndexSearcher without an executor), as Pyserini's
 * LuceneSearcher.search does: BM25Similarity(0.9, 0.4), a bag-of-words query
 * (Analysis.bagOfWords), IndexSearcher.search(query, k).
 *
 * <pre>
 * java BenchSearch --index DIR --questions FILE [--k 10] [--batch 1000] [--duration 3] [--warmup SECONDS] [--run-out FILE]
 * </pre>
 *
 * Open time is FSDirectory.open + DirectoryReader.open + new IndexSearcher,
 * the first in this JVM (open_ms, class loading included) and a second one
 * (reopen_ms). Then one untimed pass over the questions, which also writes
 * the TREC run file (qid Q0 docid rank score lucene), and --warmup seconds
 * of thread CPU time (default --duration) of untimed queries, alternating
 * the two search paths below, so that the JIT has compiled them. Then three
 * timed measurements of at least --duration seconds each: batch 1 cycles
 * through the questions one query at a time; batch N runs N questions
 * (cycled) back to back per iteration (Lucene has no batch API, so this
 * differs from batch 1 only in bookkeeping); and batch 1 the way Pyserini's
 * LuceneSearcher.search runs it: sorted by (score, id) with scores, which
 * needs BenchIndex's id doc values and scores every match (no WAND
 * skipping). Timed work is analysis + query building + search, not the id
 * lookup. The last stdout line is one JSON object.
 */
public final class BenchSearch {
    public static void main(String[] args) throws Exception {
        String index = null, questions = null, runOut = null;
        int k = 10, batch = 1000;
        double duration = 3, warmup = -1;
        for (int i = 0; i < args.length; i++) {
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--index": index = v; i++; break;
                case "--questions": questions = v; i++; break;
                case "--run-out": runOut = v; i++; break;
                case "--k": k = Integer.parseInt(v); i++; break;
                case "--batch": batch = Integer.parseInt(v); i++; break;
                case "--duration": duration = Double.parseDouble(v); i++; break;
                case "--warmup": warmup = Double.parseDouble(v); i++; break;
                default: usage("unknown flag " + args[i]);
            }
        }
        if (index == null || questions == null) {
            usage("--index and --questions are required");
        }
        if (k <= 0 || batch <= 0 || duration <= 0) {
            usage("--k, --batch and --duration must be positive");
        }
        List<String> qids = new ArrayList<>(), texts = new ArrayList<>();
        try (Jsonl in = new Jsonl(questions)) {
            for (Map<String, String> m; (m = in.next()) != null; ) {
                String q = m.get("question");
                if (q == null) {
                    throw new IOException(questions + ":" + in.line() + ": no \"question\" field");
                }
                qids.add(m.getOrDefault("id", Integer.toString(qids.size() + 1)));
                texts.add(q);
            }
        }
        if (texts.isEmpty()) {
            usage(questions + " has no questions");
        }

        long t0 = System.nanoTime();
        FSDirectory dir = FSDirectory.open(Paths.get(index));
        DirectoryReader reader = DirectoryReader.open(dir);
        IndexSearcher searcher = new IndexSearcher(reader);
        searcher.setSimilarity(Analysis.similarity());
        double openMs = (System.nanoTime() - t0) / 1e6;
        // A second open in the same JVM: classes loaded, files in the page cache.
        t0 = System.nanoTime();
        try (DirectoryReader again = DirectoryReader.open(dir)) {
            new IndexSearcher(again).setSimilarity(Analysis.similarity());
        }
        double reopenMs = (System.nanoTime() - t0) / 1e6;
        Analyzer a = Analysis.analyzer();

        // Warm-up pass, writing the run file.
        Set<String> idOnly = Collections.singleton(Analysis.ID);
        Path tmp = runOut == null ? null : Paths.get(runOut + ".tmp");
        try (BufferedWriter w = tmp == null ? null : Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            for (int i = 0; i < texts.size(); i++) {
                TopDocs td = searcher.search(Analysis.bagOfWords(a, texts.get(i)), k);
                if (w == null) {
                    continue;
                }
                int rank = 1;
                for (ScoreDoc sd : td.scoreDocs) {
                    String id = reader.document(sd.doc, idOnly).get(Analysis.ID);
                    w.write(qids.get(i) + " Q0 " + id + " " + rank++ + " " + sd.score + " lucene\n");
                }
            }
        }
        if (tmp != null) {
            Files.move(tmp, Paths.get(runOut), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }

        // Further warm-up for the JIT: --warmup seconds (default --duration) of
        // batch-1 queries, counted in this thread's CPU time so that a loaded
        // machine still gets the same amount of warm-up work.
        long sink = 0;
        long wl = (long) ((warmup < 0 ? duration : warmup) * 1e9);
        ThreadMXBean tmx = ManagementFactory.getThreadMXBean();
        boolean cpuClock = tmx.isCurrentThreadCpuTimeSupported();
        long w0 = cpuClock ? tmx.getCurrentThreadCpuTime() : System.nanoTime();
        Sort pyserini = new Sort(SortField.FIELD_SCORE, new SortField(Analysis.ID, SortField.Type.STRING_VAL));
        for (long i = 0; (cpuClock ? tmx.getCurrentThreadCpuTime() : System.nanoTime()) - w0 < wl; i++) {
            Query q = Analysis.bagOfWords(a, texts.get((int) (i % texts.size())));
            sink += (i % 2 == 0 ? searcher.search(q, k) : searcher.search(q, k, pyserini, true)).scoreDocs.length;
        }
        long limit = (long) (duration * 1e9);
        // Batch 1: one query at a time.
        long n = 0, start = System.nanoTime(), el;
        do {
            sink += searcher.search(Analysis.bagOfWords(a, texts.get((int) (n % texts.size()))), k).scoreDocs.length;
            n++;
        } while ((el = System.nanoTime() - start) < limit);
        double qps1 = n / (el / 1e9);
        // Batch N: N cycled questions back to back per iteration.
        long m = 0, it = 0;
        start = System.nanoTime();
        do {
            for (int j = 0; j < batch; j++) {
                sink += searcher.search(Analysis.bagOfWords(a, texts.get((int) ((it * batch + j) % texts.size()))), k).scoreDocs.length;
            }
            it++;
            m += batch;
        } while ((el = System.nanoTime() - start) < limit);
        double qpsN = m / (el / 1e9);
        // Pyserini's LuceneSearcher.search: sort by score, ties by id (its
        // BREAK_SCORE_TIES_BY_DOCID), with scores; one query at a time.
        long p = 0;
        start = System.nanoTime();
        do {
            sink += searcher.search(Analysis.bagOfWords(a, texts.get((int) (p % texts.size()))), k, pyserini, true).scoreDocs.length;
            p++;
        } while ((el = System.nanoTime() - start) < limit);
        double qpsP = p / (el / 1e9);
        int numDocs = reader.numDocs();
        reader.close();
        dir.close();
        System.err.printf("lucene search: open %.1f ms, batch 1 %.0f q/s, batch %d %.0f q/s, Pyserini sort %.0f q/s (%d hits seen)%n", openMs, qps1, batch, qpsN, qpsP, sink);
        System.out.printf("{\"docs\": %d, \"questions\": %d, \"k\": %d, \"batch\": %d, \"open_ms\": %.3f, \"reopen_ms\": %.3f, \"bm25_batch1_qps\": %.1f, \"bm25_batchN_qps\": %.1f, \"bm25_pyserini_qps\": %.1f}%n",
                numDocs, texts.size(), k, batch, openMs, reopenMs, qps1, qpsN, qpsP);
    }

    private static void usage(String why) {
        System.err.println("BenchSearch: " + why);
        System.err.println("usage: BenchSearch --index DIR --questions FILE [--k 10] [--batch 1000] [--duration 3] [--warmup SECONDS] [--run-out FILE]");
        System.exit(2);
    }
}
