package hybrid

import (
	"embed"
	"fmt"
	"os"
	"sort"
	"strings"
)

//go:embed schemas/*.json
var schemaFS embed.FS

// BuiltinSchema returns a shipped schema by name: "amazon_toys" (for
// shared/data/amazon_toys/products.jsonl) or "enron_emails" (for
// shared/data/enron_emails/emails.jsonl). Each call returns a new copy.
func BuiltinSchema(name string) (*Schema, error) {
	raw, err := schemaFS.ReadFile("schemas/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("hybrid: no built-in schema %q (have %s)", name, strings.Join(BuiltinSchemas(), ", "))
	}
	return ParseSchema(raw)
}

// BuiltinSchemas lists the shipped schema names.
func BuiltinSchemas() []string {
	ents, _ := schemaFS.ReadDir("schemas")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(out)
	return out
}

// ResolveSchema loads the schema file at nameOrPath when it exists, else
// the built-in schema of that name (BuiltinSchemas).
func ResolveSchema(nameOrPath string) (*Schema, error) {
	if _, err := os.Stat(nameOrPath); err == nil {
		return LoadSchema(nameOrPath)
	}
	return BuiltinSchema(nameOrPath)
}
