import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LogByteSizeMergePolicy;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;

/**
 * BenchIndex builds a Lucene BM25 index of a corpus JSONL the way Pyserini's
 * IndexCollection does for a JsonCollection (DefaultLuceneDocumentGenerator):
 * a stored "id" StringField with a SortedDocValuesField of the same id (for
 * Pyserini's sort by (score, id)) and a "contents" field analysed by
 * EnglishAnalyzer with DOCS_AND_FREQS (no positions: Anserini without
 * -storePositions), stored like -storeContents so that the index can serve
 * passages as ours does.
 *
 * <pre>
 * java BenchIndex --corpus FILE|- --out DIR [--ram-mb 1024] [--merge true|false]
 * </pre>
 *
 * One indexing thread (the caller) and SerialMergeScheduler. The merge
 * policy is LogByteSizeMergePolicy, which merges only adjacent segments, so
 * Lucene doc ids stay in corpus order and score ties break by corpus row as
 * ours do. With --merge true (the default) the index is force-merged to one
 * segment, as Anserini's -optimize and Pyserini's prebuilt indexes are: one
 * segment is the fastest layout to search and matches our single-file
 * postings. Passages with blank text are skipped, as `rlsearch index` does.
 * The index is written to DIR.tmp and renamed to DIR. The last stdout line
 * is one JSON object with the counts and the phase timings in seconds.
 */
public final class BenchIndex {
    public static void main(String[] args) throws Exception {
        String corpus = null, out = null;
        double ramMB = 1024;
        boolean merge = true;
        for (int i = 0; i < args.length; i++) {
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--corpus": corpus = v; i++; break;
                case "--out": out = v; i++; break;
                case "--ram-mb": ramMB = Double.parseDouble(v); i++; break;
                case "--merge": merge = Boolean.parseBoolean(v); i++; break;
                default: usage("unknown flag " + args[i]);
            }
        }
        if (corpus == null || out == null) {
            usage("--corpus and --out are required");
        }
        Path dir = Paths.get(out);
        Path tmp = Paths.get(out + ".tmp");
        if (Files.exists(dir)) {
            usage(out + " exists; remove it first");
        }
        deleteTree(tmp);

        FieldType contentsType = new FieldType();
        contentsType.setTokenized(true);
        contentsType.setStored(true);
        contentsType.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
        contentsType.freeze();

        IndexWriterConfig cfg = new IndexWriterConfig(Analysis.analyzer())
                .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
                .setSimilarity(Analysis.similarity())
                .setRAMBufferSizeMB(ramMB)
                .setUseCompoundFile(false)
                .setMergePolicy(new LogByteSizeMergePolicy())
                .setMergeScheduler(new SerialMergeScheduler());

        long t0 = System.nanoTime();
        long docs = 0, skipped = 0;
        double addS, commitS, mergeS = 0;
        try (FSDirectory fsd = FSDirectory.open(tmp);
             IndexWriter w = new IndexWriter(fsd, cfg);
             Jsonl in = new Jsonl(corpus)) {
            StringField id = new StringField(Analysis.ID, "", Field.Store.YES);
            SortedDocValuesField idDV = new SortedDocValuesField(Analysis.ID, new BytesRef());
            Field contents = new Field(Analysis.CONTENTS, "", contentsType);
            Document doc = new Document();
            doc.add(id);
            doc.add(idDV);
            doc.add(contents);
            long lastReport = t0;
            for (Map<String, String> m; (m = in.next()) != null; ) {
                String idv = m.get("id");
                if (idv == null) {
                    throw new IOException(corpus + ":" + in.line() + ": no \"id\" field");
                }
                String c = m.get("contents"), text;
                if (c != null) {
                    int nl = c.indexOf('\n');
                    text = nl < 0 ? c : c.substring(nl + 1);
                } else if (m.containsKey("title") || m.containsKey("text")) {
                    text = m.getOrDefault("text", "");
                    c = "\"" + m.getOrDefault("title", "") + "\"\n" + text;
                } else {
                    throw new IOException(corpus + ":" + in.line() + ": no \"contents\" and no \"title\"/\"text\" field");
                }
                if (text.isBlank()) {
                    skipped++;
                    continue;
                }
                id.setStringValue(idv);
                idDV.setBytesValue(new BytesRef(idv));
                contents.setStringValue(c);
                w.addDocument(doc);
                docs++;
                if ((docs & 1023) == 0 && System.nanoTime() - lastReport > 10_000_000_000L) {
                    lastReport = System.nanoTime();
                    double s = (lastReport - t0) / 1e9;
                    System.err.printf("lucene index: %d passages in %.0fs (%.0f/s)%n", docs, s, docs / s);
                }
            }
            addS = (System.nanoTime() - t0) / 1e9;
            long t1 = System.nanoTime();
            w.commit();
            commitS = (System.nanoTime() - t1) / 1e9;
            if (merge) {
                long t2 = System.nanoTime();
                w.forceMerge(1);
                w.commit();
                mergeS = (System.nanoTime() - t2) / 1e9;
            }
        }
        Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
        double total = (System.nanoTime() - t0) / 1e9;
        System.err.printf("lucene index: %d passages (%d blank skipped) in %.1fs (%.0f/s)%n", docs, skipped, total, docs / total);
        System.out.printf("{\"docs\": %d, \"skipped\": %d, \"add_s\": %.3f, \"commit_s\": %.3f, \"merge_s\": %.3f, \"total_s\": %.3f, \"ram_mb\": %.0f, \"force_merge\": %b}%n",
                docs, skipped, addS, commitS, mergeS, total, ramMB, merge);
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(q);
            }
        }
    }

    private static void usage(String why) {
        System.err.println("BenchIndex: " + why);
        System.err.println("usage: BenchIndex --corpus FILE|- --out DIR [--ram-mb 1024] [--merge true|false]");
        System.exit(2);
    }
}
