import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;

/**
 * Jsonl reads JSON Lines one object at a time with Jackson's streaming parser
 * (Debian libjackson2-core-java). Only top-level string and number fields
 * are kept; nested values are skipped. Not safe for concurrent use.
 */
final class Jsonl implements AutoCloseable {
    private static final JsonFactory FACTORY = new JsonFactory();
    private final BufferedReader in;
    private final String name;
    private long line;

    /** Opens path, or standard input when path is "-". Input must be UTF-8. */
    Jsonl(String path) throws IOException {
        this.name = path;
        this.in = path.equals("-")
                ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 20)
                : Files.newBufferedReader(Paths.get(path), StandardCharsets.UTF_8);
    }

    /** The 1-based number of the line last returned by next. */
    long line() {
        return line;
    }

    /**
     * Returns the next non-blank line's top-level scalar fields (numbers as
     * their JSON text), or null at the end. A line that is not a JSON object
     * throws an IOException naming the file and line.
     */
    Map<String, String> next() throws IOException {
        String s;
        do {
            s = in.readLine();
            if (s == null) {
                return null;
            }
            line++;
            if (line == 1 && s.startsWith("\uFEFF")) {
                s = s.substring(1);
            }
        } while (s.isBlank());
        Map<String, String> out = new HashMap<>();
        try (JsonParser p = FACTORY.createParser(s)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException(name + ":" + line + ": want a JSON object");
            }
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                if (t != JsonToken.FIELD_NAME) {
                    throw new IOException(name + ":" + line + ": malformed object");
                }
                String key = p.getCurrentName();
                JsonToken v = p.nextToken();
                if (v == JsonToken.VALUE_STRING || v == JsonToken.VALUE_NUMBER_INT || v == JsonToken.VALUE_NUMBER_FLOAT) {
                    out.put(key, p.getText());
                } else {
                    p.skipChildren();
                }
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException(name + ":" + line + ": " + e.getOriginalMessage(), e);
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
