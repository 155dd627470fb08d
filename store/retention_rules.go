package store

import (
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
		d, err := parseAge(strings.TrimSpace(age))
		if err != nil {
			return Retention{}, fmt.Errorf("%w: %q: %v", ErrBadRetention, item, err)
		}
		who = strings.TrimSpace(who)
		switch {
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

// retention is what the store was opened to keep.
func (s *Store) retention() Retention {
	return Retention{MaxAge: s.opts.MaxAge, MaxBytes: s.opts.MaxBytes, Rules: s.opts.RetentionRules}
}

// Retention returns what the store was opened to keep ([Options]), to
// show: "support 30 days, everything 1 year".
func (s *Store) Retention() Retention { return s.retention() }
