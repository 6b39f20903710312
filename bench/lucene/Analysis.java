import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.similarities.BM25Similarity;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The analysis and scoring both programs share, as Pyserini configures
 * Lucene for its BM25 indexes.
 */
final class Analysis {
    /** Field holding the analysed passage ("contents", as in Pyserini). */
    static final String CONTENTS = "contents";
    /** Stored passage id. */
    static final String ID = "id";

    private Analysis() {}

    /**
     * EnglishAnalyzer: StandardTokenizer, EnglishPossessiveFilter,
     * LowerCaseFilter, StopFilter (Lucene's 33 English stop words),
     * PorterStemFilter: the chain of Anserini's DefaultEnglishAnalyzer.
     */
    static Analyzer analyzer() {
        return new EnglishAnalyzer();
    }

    /** Lucene BM25Similarity with Pyserini's k1 = 0.9, b = 0.4. */
    static BM25Similarity similarity() {
        return new BM25Similarity(0.9f, 0.4f);
    }

    /**
     * Pyserini's BagOfWordsQueryGenerator: the analysed terms of q, each
     * once as a SHOULD TermQuery, boosted by its count when it occurs more
     * than once. A query without terms is an empty BooleanQuery (no hits).
     */
    static Query bagOfWords(Analyzer a, String q) throws IOException {
        Map<String, Integer> counts = new LinkedHashMap<>();
        try (TokenStream ts = a.tokenStream(CONTENTS, q)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            ts.reset();
            while (ts.incrementToken()) {
                counts.merge(term.toString(), 1, Integer::sum);
            }
            ts.end();
        }
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (Map.Entry<String, Integer> e : counts.entrySet()) {
            Query tq = new TermQuery(new Term(CONTENTS, e.getKey()));
            if (e.getValue() > 1) {
                tq = new BoostQuery(tq, e.getValue());
            }
            b.add(tq, BooleanClause.Occur.SHOULD);
        }
        return b.build();
    }
}
