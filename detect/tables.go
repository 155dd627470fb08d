package detect

// The operations each language's code applies to a collection, by the
// tag they mean. A name missing from a table is not a query (join, to_a,
// compact): the chain simply goes on past it.

var rubyMethods = map[string]Tag{
	"select": Filter, "filter": Filter, "reject": Filter, "find_all": Filter, "grep": Filter, "grep_v": Filter, "filter_map": Filter,
	"map": Map, "collect": Map, "flat_map": Map, "pluck": Map, "collect_concat": Map,
	"first": Slice, "last": Slice, "take": Slice, "drop": Slice, "take_while": Slice, "drop_while": Slice, "slice": Slice, "values_at": Slice,
	"count": Count, "size": Count, "length": Count, "empty?": Count,
	"group_by": Group, "partition": Group, "tally": Group, "chunk_while": Group, "slice_when": Group, "each_slice": Group, "chunk": Group,
	"sort": Sort, "sort_by": Sort, "min_by": Sort, "max_by": Sort, "min": Sort, "max": Sort, "minmax": Sort, "reverse": Sort,
	"reduce": Reduce, "inject": Reduce, "sum": Reduce,
	"find": Search, "detect": Search, "any?": Search, "all?": Search, "none?": Search, "include?": Search, "find_index": Search, "index": Search, "member?": Search,
	"each": Iterate, "each_with_index": Iterate, "each_with_object": Iterate, "reverse_each": Iterate,
}

var pythonMethods = map[string]Tag{
	"sort": Sort, "reverse": Sort, "index": Search, "count": Count,
}

var jsMethods = map[string]Tag{
	"filter": Filter,
	"map":    Map, "flatMap": Map,
	"slice": Slice, "at": Slice,
	"length": Count,
	"sort":   Sort, "toSorted": Sort, "reverse": Sort, "toReversed": Sort,
	"reduce": Reduce, "reduceRight": Reduce,
	"find": Search, "findIndex": Search, "findLast": Search, "findLastIndex": Search, "some": Search, "every": Search, "includes": Search, "indexOf": Search,
	"forEach": Iterate,
}

func methodTag(lang Language, name string) (Tag, bool) {
	var t Tag
	var ok bool
	switch lang {
	case Ruby:
		t, ok = rubyMethods[name]
	case Python:
		t, ok = pythonMethods[name]
	case JavaScript:
		t, ok = jsMethods[name]
	}
	return t, ok
}

var pythonFuncs = map[string]Tag{
	"len": Count, "filter": Filter, "map": Map, "sorted": Sort, "min": Sort, "max": Sort, "reversed": Sort,
	"sum": Reduce, "reduce": Reduce, "next": Search, "any": Search, "all": Search,
	"groupby": Group, "Counter": Group, "islice": Slice, "enumerate": Iterate,
}

var goFuncs = map[string]Tag{
	"len":             Count,
	"slices.SortFunc": Sort, "slices.SortStableFunc": Sort, "slices.Sort": Sort, "sort.Slice": Sort, "sort.SliceStable": Sort,
	"slices.IndexFunc": Search, "slices.ContainsFunc": Search, "slices.Index": Search, "slices.Contains": Search,
	"slices.Reverse": Sort, "slices.MaxFunc": Sort, "slices.MinFunc": Sort,
}

// funcTag is the tag of calling a function with the history as an
// argument: len(h), itertools.groupby(h, ...), Object.groupBy(h, ...).
func funcTag(lang Language, qual, name string) (Tag, bool) {
	var t Tag
	var ok bool
	switch lang {
	case Python:
		if qual == "" || qual == "itertools" || qual == "functools" || qual == "collections" || qual == "builtins" {
			t, ok = pythonFuncs[name]
		}
	case Go:
		if qual != "" {
			t, ok = goFuncs[qual+"."+name]
		} else {
			t, ok = goFuncs[name]
		}
	case JavaScript:
		if name == "groupBy" && (qual == "Object" || qual == "Map") {
			return Group, true
		}
	}
	return t, ok
}

// preserves reports whether a call returns the history, or a part or view
// of it, so that a call around it queries the history too.
func preserves(lang Language, qual, name string) bool {
	switch lang {
	case Python:
		switch name {
		case "list", "tuple", "filter", "sorted", "reversed", "islice", "iter", "enumerate":
			return qual == "" || qual == "itertools"
		}
	case JavaScript:
		return name == "from" && qual == "Array"
	case Ruby:
		return name == "Array" && qual == "" // Kernel#Array(h)
	}
	return false
}
