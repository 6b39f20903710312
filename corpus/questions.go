package corpus

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/rlsearch/rlsearch/internal/answer"
)

// Question is one line of a question set (questions.jsonl of the shared
// data: the fields the search command, the evaluations and the benchmarks
// use).
type Question struct {
	ID          string   `json:"id"`
	Question    string   `json:"question"`
	Dataset     string   `json:"dataset"`
	GoldAnswers []string `json:"golden_answers"`
	GoldIDs     []string `json:"gold_passage_ids"`
}

// LoadQuestions reads a JSONL question set. Lines without a question are an
// error naming the line. Questions with a gold answer that normalises to
// the empty string are counted and logged as a warning (log.Printf); see
// LoadQuestionsStats.
func LoadQuestions(path string) ([]Question, error) {
	qs, st, err := LoadQuestionsStats(path)
	if err == nil && st.GoldEmptyAfterNormalize > 0 {
		log.Print(st.Warning(path))
	}
	return qs, err
}

// LoadStats describes a loaded question set.
type LoadStats struct {
	Questions int
	// GoldEmptyAfterNormalize counts the questions with a gold answer that
	// reward.Normalize maps to "" (gold "A", "The The", "!!!"); the reward
	// metrics match such golds by reward.LightTokens and flag them in
	// their results (gold_empty_after_normalize).
	GoldEmptyAfterNormalize int
	GoldEmptyLines          []int // line numbers of the first 20 of them
}

// Warning is the message LoadQuestions logs for s, naming path; "" when
// there is nothing to warn about.
func (s LoadStats) Warning(path string) string {
	if s.GoldEmptyAfterNormalize == 0 {
		return ""
	}
	return fmt.Sprintf("corpus: warning: %s: %d of %d questions have a gold answer that normalises to the empty string (lines %v); EM, F1 and contains compare it by its light form (reward.LightTokens)",
		path, s.GoldEmptyAfterNormalize, s.Questions, s.GoldEmptyLines)
}

// LoadQuestionsStats is LoadQuestions without the log: it returns the
// questions and their LoadStats. A question without a dataset gets
// dataset "all".
func LoadQuestionsStats(path string) ([]Question, LoadStats, error) {
	var st LoadStats
	f, err := os.Open(path)
	if err != nil {
		return nil, st, fmt.Errorf("corpus: %w", err)
	}
	defer f.Close()
	var qs []Question
	br := bufio.NewReader(f)
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(raw))) > 0 {
			var q Question
			if jerr := json.Unmarshal(raw, &q); jerr != nil {
				return nil, st, fmt.Errorf("corpus: %s line %d: %v", path, line, jerr)
			}
			if q.Question == "" {
				return nil, st, fmt.Errorf("corpus: %s line %d: no \"question\"", path, line)
			}
			if q.Dataset == "" {
				q.Dataset = "all"
			}
			if answer.GoldEmptyAfterNormalize(q.GoldAnswers) {
				st.GoldEmptyAfterNormalize++
				if len(st.GoldEmptyLines) < 20 {
					st.GoldEmptyLines = append(st.GoldEmptyLines, line)
				}
			}
			qs = append(qs, q)
		}
		if err == io.EOF {
			st.Questions = len(qs)
			return qs, st, nil
		}
		if err != nil {
			return nil, st, fmt.Errorf("corpus: %s: %w", path, err)
		}
	}
}

// Texts returns the question texts of qs (a new slice).
func Texts(qs []Question) []string {
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Question
	}
	return texts
}
