package hybrid

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// IsCollection reports whether dir holds a collection (its MetaFile).
func IsCollection(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, MetaFile))
	return err == nil
}

// OpenCollections opens dir as one collection when it holds MetaFile, else
// each immediate subdirectory that holds one; "" opens none (an empty
// map). Collections are keyed by their schema name. The caller closes
// them. Errors: an unreadable dir, a dir holding no collection, a
// collection that fails to open (naming it; those opened before are
// closed), two collections with one name.
func OpenCollections(ctx context.Context, dir string, cfg OpenConfig) (map[string]*Collection, error) {
	cols := map[string]*Collection{}
	if dir == "" {
		return cols, nil
	}
	dirs := []string{dir}
	if !IsCollection(dir) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("hybrid: collections: %w", err)
		}
		dirs = nil
		for _, e := range ents {
			if p := filepath.Join(dir, e.Name()); IsCollection(p) {
				dirs = append(dirs, p)
			}
		}
		if len(dirs) == 0 {
			return nil, fmt.Errorf("hybrid: collections: %s holds no collection (no %s)", dir, MetaFile)
		}
	}
	closeAll := func() {
		for _, o := range cols {
			o.Close()
		}
	}
	for _, d := range dirs {
		c, err := Open(ctx, d, cfg)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("open collection %s: %w", d, err)
		}
		name := c.Schema().Name
		if _, dup := cols[name]; dup {
			c.Close()
			closeAll()
			return nil, fmt.Errorf("hybrid: two collections named %s under %s", name, dir)
		}
		cols[name] = c
	}
	return cols, nil
}
