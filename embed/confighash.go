package embed

import (
	"hash/fnv"
	"os"
	"path/filepath"
)

// ConfigHash is the FNV-64a hash of the model's ConfigFile (rlsearch.json)
// in dir: index.BuildConfig.ConfigHash, recorded in the vector file's
// header and in meta.json; `rlsearch check` checks that the two agree.
// Opening an index does not compare it with the serving model.
func ConfigHash(dir string) (uint64, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return 0, err
	}
	h := fnv.New64a()
	h.Write(raw)
	return h.Sum64(), nil
}
