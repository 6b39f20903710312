package reward

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// cacheVersion is stored in cache files; a file of another version is
// refused rather than misread.
const cacheVersion = 1

// JudgeCache holds judgements by content hash and persists them to one
// JSON file, {"version": 1, "entries": {"<sha256 hex>": Judgement}},
// rewritten atomically by Save. Safe for concurrent use.
type JudgeCache struct {
	path  string
	mu    sync.Mutex
	m     map[string]Judgement
	dirty bool
	hits  int
	miss  int
}

type cacheFile struct {
	Version int                  `json:"version"`
	Entries map[string]Judgement `json:"entries"`
}

// OpenJudgeCache loads the cache at path, or starts an empty one when the
// file does not exist. An empty path gives a memory-only cache. A file that
// does not parse or has another version is an error (delete it to start
// over).
func OpenJudgeCache(path string) (*JudgeCache, error) {
	c := &JudgeCache{path: path, m: map[string]Judgement{}}
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reward: judge cache: %w", err)
	}
	var f cacheFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("reward: judge cache %s: %w", path, err)
	}
	if f.Version != cacheVersion {
		return nil, fmt.Errorf("reward: judge cache %s has version %d, want %d", path, f.Version, cacheVersion)
	}
	if f.Entries != nil {
		c.m = f.Entries
	}
	return c, nil
}

// Len returns the number of cached judgements.
func (c *JudgeCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Stats returns the hits and misses of Get since the cache was opened.
func (c *JudgeCache) Stats() (hits, misses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.miss
}

// Get returns the judgement stored under key.
func (c *JudgeCache) Get(key string) (Judgement, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j, ok := c.m[key]
	if ok {
		c.hits++
	} else {
		c.miss++
	}
	return j, ok
}

// Put stores j under key.
func (c *JudgeCache) Put(key string, j Judgement) {
	c.mu.Lock()
	c.m[key] = j
	c.dirty = true
	c.mu.Unlock()
}

// Save writes the cache atomically when it changed since the last Save; a
// memory-only cache does nothing.
func (c *JudgeCache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" || !c.dirty {
		return nil
	}
	b, err := json.Marshal(cacheFile{Version: cacheVersion, Entries: c.m})
	if err != nil {
		return fmt.Errorf("reward: judge cache: %w", err)
	}
	if err := writeFileAtomic(c.path, b); err != nil {
		return err
	}
	c.dirty = false
	return nil
}

// JudgeKey is the cache key of req for the judge named name: the SHA-256
// (hex) of name, a NUL byte and the JSON encoding of req.
func JudgeKey(name string, req JudgeRequest) string {
	b, _ := json.Marshal(req) // a struct of strings: cannot fail
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// CachedJudge answers from Cache when it can and asks Inner otherwise,
// storing successful judgements (failures are not cached). Safe for
// concurrent use when Inner is; two concurrent misses on one key may both
// reach Inner.
type CachedJudge struct {
	Inner Judge
	Cache *JudgeCache
}

// Name returns the inner judge's name.
func (c CachedJudge) Name() string { return c.Inner.Name() }

// Judge implements Judge.
func (c CachedJudge) Judge(ctx context.Context, req JudgeRequest) (Judgement, error) {
	key := JudgeKey(c.Inner.Name(), req)
	if j, ok := c.Cache.Get(key); ok {
		return j, nil
	}
	j, err := c.Inner.Judge(ctx, req)
	if err != nil {
		return Judgement{}, err
	}
	c.Cache.Put(key, j)
	return j, nil
}
