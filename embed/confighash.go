package embed

import (
	"hash/fnv"
	"os"
	"path/filepath"
)

// ConfigHash is the FNV-64a hash of the model's ConfigFile (rlsearch.json)
// in dir: index.BuildConfig.ConfigHash, recorded in a dense shard so that
// a shard is served only with the model configuration that built it.
func ConfigHash(dir string) (uint64, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return 0, err
	}
	h := fnv.New64a()
	h.Write(raw)
	return h.Sum64(), nil
}
