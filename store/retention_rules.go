package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrBadRetention: a retention that cannot be applied, or its text
// ([ParseRetention]) that does not say one.
var ErrBadRetention = errors.New("store: invalid retention")

// Validate reports what makes the retention unfit to apply: a negative
// bound, a rule with neither or both of a tag and a user, or without an
// age.
func (r Retention) Validate() error {
	if r.MaxAge < 0 || r.MaxBytes < 0 {
		return fmt.Errorf("%w: a negative bound", ErrBadRetention)
	}
	for _, rule := range r.Rules {
		switch {
		case (rule.Tag == "") == (rule.User == ""):
			return fmt.Errorf("%w: a rule names a tag or a user, one of them (%+v)", ErrBadRetention, rule)
		case strings.ContainsAny(rule.Tag+rule.User, ",="):
			return fmt.Errorf("%w: the rule for %s: a tag or user with a comma or an equals sign cannot be kept as a rule", ErrBadRetention, rule.subject())
		case rule.MaxAge <= 0:
			return fmt.Errorf("%w: the rule for %s gives no age", ErrBadRetention, rule.subject())
		}
	}
	return nil
}

func (r RetentionRule) subject() string {
	if r.User != "" {
		return "user " + r.User
	}
	return r.Tag
}

// String says the retention as a person reads it, the rules first:
// "support 30 days, user u-42 7 days, everything 1 year, at most 2.0 GB";
// "keep everything" for the zero value.
func (r Retention) String() string {
	var parts []string
	for _, rule := range r.Rules {
		parts = append(parts, rule.subject()+" "+ageString(rule.MaxAge))
	}
	if r.MaxAge > 0 {
		parts = append(parts, "everything "+ageString(r.MaxAge))
	}
	if r.MaxBytes > 0 {
		parts = append(parts, fmt.Sprintf("at most %.1f GB", float64(r.MaxBytes)/1e9))
	}
	if len(parts) == 0 {
		return "keep everything"
	}
	return strings.Join(parts, ", ")
}

const day = 24 * time.Hour

func ageString(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.FormatInt(n, 10) + " " + one + "s"
	}
	switch {
	case d%(365*day) == 0:
		return unit(int64(d/(365*day)), "year")
	case d%day == 0:
		return unit(int64(d/day), "day")
	case d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	}
	return d.String()
}

// ParseRetention reads a retention as a command's flag gives it: a
// comma-separated list of
//
//	all=AGE          every record (Retention.MaxAge)
//	tag:TAG=AGE      the records of a tag
//	user:USER=AGE    the records of a user
//
// AGE is a number of hours, days, weeks or years (12h, 30d, 8w, 1y) or
// a Go duration ("90m"). "support=30d" is short for "tag:support=30d".
// An empty text keeps everything.
func ParseRetention(text string) (Retention, error) {
	var r Retention
	for item := range strings.SplitSeq(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		who, age, ok := strings.Cut(item, "=")
		if !ok {
			return Retention{}, fmt.Errorf("%w: %q: want WHO=AGE (all=1y, tag:support=30d, user:u-42=7d)", ErrBadRetention, item)
		}
		who = strings.TrimSpace(who)
		var d time.Duration
		if who != "bytes" {
			var err error
			if d, err = parseAge(strings.TrimSpace(age)); err != nil {
				return Retention{}, fmt.Errorf("%w: %q: %v", ErrBadRetention, item, err)
			}
		}
		switch {
		case who == "bytes":
			n, err := strconv.ParseInt(strings.TrimSpace(age), 10, 64)
			if err != nil || n <= 0 {
				return Retention{}, fmt.Errorf("%w: %q: bytes wants a positive number", ErrBadRetention, item)
			}
			r.MaxBytes = n
			continue
		case who == "all" || who == "*":
			if r.MaxAge != 0 {
				return Retention{}, fmt.Errorf("%w: %q: the age of all records is given twice", ErrBadRetention, item)
			}
			r.MaxAge = d
		case strings.HasPrefix(who, "user:"):
			r.Rules = append(r.Rules, RetentionRule{User: strings.TrimPrefix(who, "user:"), MaxAge: d})
		default:
			r.Rules = append(r.Rules, RetentionRule{Tag: strings.TrimPrefix(who, "tag:"), MaxAge: d})
		}
	}
	return r, r.Validate()
}

// parseAge reads 12h, 30d, 8w, 1y, or a Go duration; it must be
// positive.
func parseAge(s string) (time.Duration, error) {
	units := map[byte]time.Duration{'h': time.Hour, 'd': day, 'w': 7 * day, 'y': 365 * day}
	var d time.Duration
	if n := len(s); n > 1 {
		if u, ok := units[s[n-1]]; ok {
			if v, err := strconv.ParseInt(s[:n-1], 10, 64); err == nil {
				if v <= 0 || v > int64(200*365*day/u) {
					return 0, fmt.Errorf("an age of %s is out of range", s)
				}
				return time.Duration(v) * u, nil
			}
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not an age (12h, 30d, 8w, 1y)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("an age of %s keeps nothing", s)
	}
	return d, nil
}

// Spec is the retention as [ParseRetention] reads it back:
// "tag:support=720h,user:u-42=168h,all=8760h,bytes=1000000000".
func (r Retention) Spec() string {
	var parts []string
	for _, rule := range r.Rules {
		who := "tag:" + rule.Tag
		if rule.User != "" {
			who = "user:" + rule.User
		}
		parts = append(parts, who+"="+rule.MaxAge.String())
	}
	if r.MaxAge > 0 {
		parts = append(parts, "all="+r.MaxAge.String())
	}
	if r.MaxBytes > 0 {
		parts = append(parts, "bytes="+strconv.FormatInt(r.MaxBytes, 10))
	}
	return strings.Join(parts, ",")
}

// retention is what the store keeps: its options', or the one kept in
// the store (settleRetention).
func (s *Store) retention() Retention {
	return Retention{MaxAge: s.opts.MaxAge, MaxBytes: s.opts.MaxBytes, Rules: s.opts.RetentionRules}
}

// Retention returns what the store keeps, to show ("support 30 days,
// everything 1 year"): the retention it was opened with, or else the one
// the last writer opened with a retention left in it.
func (s *Store) Retention() Retention { return s.retention() }

// settleRetention makes the retention a store's own: a store opened for
// writing with one keeps it (meta key retention), so that readers can
// say it and writers opened without one apply it too; a store opened
// without one takes what it keeps.
func (s *Store) settleRetention(ctx context.Context) error {
	if r := s.retention(); !r.IsZero() && !s.opts.ReadOnly {
		_, err := s.w.ExecContext(ctx, s.q(`INSERT INTO llmhistory_meta (key, value) VALUES ('retention', $1)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`), r.Spec())
		if err != nil && s.fault(err) != FaultReadOnly {
			return fmt.Errorf("store: keep the retention in %s: %w", s.url, err)
		}
		return nil
	}
	var spec string
	err := s.r.QueryRowContext(ctx, `SELECT value FROM llmhistory_meta WHERE key = 'retention'`).Scan(&spec)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return s.readErr(err)
	}
	r, err := ParseRetention(spec)
	if err != nil {
		return fmt.Errorf("store: %s keeps a retention this llmhistory cannot read (%q): %w", s.url, spec, err)
	}
	if r.MaxBytes > 0 && !s.d.sizeRetention() {
		r.MaxBytes = 0
	}
	s.opts.MaxAge, s.opts.MaxBytes, s.opts.RetentionRules = r.MaxAge, r.MaxBytes, r.Rules
	return nil
}
