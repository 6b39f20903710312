package rlsearch

// Off is the one sentinel of the module's options. Every numeric field of
// a Config (or Options) struct follows one convention: 0 means the
// documented default, and a negative value, spelled Off, turns the
// feature off (no cache, no retries, no heap guard, no waiting) or, for a
// parameter whose "off" is a literal zero, asks for that zero (bm25
// Config.B = Off: no length normalisation). A field's doc says what its
// default is and what Off does there; it never gives 0 a private meaning.
// The flags of the binaries pass their values through unchanged and accept
// "off" for Off where the field has it (cmd/internal/cmdflags).
const Off = -1
