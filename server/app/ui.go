package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/rlsearch/rlsearch/inspect"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/sdk"
)

// UIConfig is the rollout inspector at /ui/ (package inspect).
type UIConfig struct {
	// Dumps are rollout dumps (JSONL, any format inspect reads) loaded in
	// the background at startup; the page is served without any too (its
	// what-if editor runs programs against the index).
	Dumps []string
	// Gold is a questions JSONL joined to rollouts without gold ("" = none).
	Gold string
}

// AddUI mounts the inspector under /ui/ in pages: its dumps start loading
// in the background (scored with o's configuration and the lexical judge;
// cancelled by the returned closer), and programs are replayed on rt's
// configuration. Errors: the gold file's, the reward options'.
func AddUI(ctx context.Context, pages map[string]http.Handler, cfg UIConfig, rt *sdk.Runtime, o reward.Options, logger *slog.Logger) (func(), error) {
	var gold *inspect.Gold
	if cfg.Gold != "" {
		f, err := os.Open(cfg.Gold)
		if err != nil {
			return nil, fmt.Errorf("%w: --inspect-gold: %v", ErrConfig, err)
		}
		gold, err = inspect.ReadGold(f, cfg.Gold)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: --inspect-gold: %v", ErrConfig, err)
		}
	}
	an, err := inspect.NewAnalyzer(inspect.AnalyzerConfig{Reward: o, Gold: gold})
	if err != nil {
		return nil, err
	}
	tr, err := inspect.NewTracer(rt.Config())
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var dumps []*inspect.Dump
	for _, path := range cfg.Dumps {
		d := inspect.NewDump(path, an)
		dumps = append(dumps, d)
		go func() {
			if err := d.Load(lctx, inspect.LoadConfig{}); err != nil {
				logger.Error("inspect: load failed", "dump", path, "err", err)
				return
			}
			s, _ := d.Summary()
			logger.Info("inspect: dump loaded", "dump", path, "rollouts", s.Rollouts, "bad_lines", s.Bad, "seconds", s.LoadSeconds)
		}()
	}
	pages["/ui/"] = http.StripPrefix("/ui", inspect.NewUI(inspect.UIConfig{Dumps: dumps, Tracer: tr}))
	return cancel, nil
}
