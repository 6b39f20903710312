package hybrid

import (
	"context"
	"testing"
)

// BenchmarkOpenChecks measures, on each shipped collection built from the
// real data, the whole Open (manifest and CRC-32C of every file included),
// the manifest check alone, SQLite's quick_check and integrity_check (not
// run by Open; integrity_check is part of CheckIntegrity) and the whole CheckIntegrity.
func BenchmarkOpenChecks(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"amazon_toys", "enron_emails"} {
		dir := shipped(b, name).Dir
		var bytes int64
		for _, f := range shipped(b, name).Meta.Files {
			bytes += f.Size
		}
		b.Run(name+"/open", func(b *testing.B) {
			for b.Loop() {
				c, err := Open(ctx, dir, OpenConfig{})
				if err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
		b.Run(name+"/manifest", func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				m, err := readMeta(dir)
				if err == nil {
					err = m.checkFiles(ctx, dir, nil)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, p := range []string{"quick_check", "integrity_check"} {
			b.Run(name+"/"+p, func(b *testing.B) {
				db, err := openDB(dir, 1)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				for b.Loop() {
					var s string
					if err := db.QueryRowContext(ctx, "PRAGMA "+p).Scan(&s); err != nil || s != "ok" {
						b.Fatal(s, err)
					}
				}
			})
		}
		b.Run(name+"/verify", func(b *testing.B) {
			for b.Loop() {
				if err := CheckIntegrity(ctx, dir, IntegrityConfig{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
