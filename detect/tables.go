package detect

// The operations each language's code applies to a collection, by the
// tag they mean. A name missing from a table is not a query (join, to_a,
// compact): the chain simply goes on past it.

// The method tables are switches rather than maps: a chain looks up each
// of its methods, and a switch on a string (by length, then by value)
// costs less than hashing it.

func rubyMethod(name string) (Tag, bool) {
	switch name {
	case "select", "filter", "reject", "find_all", "grep", "grep_v", "filter_map":
		return Filter, true
	case "map", "collect", "flat_map", "pluck", "collect_concat":
		return Map, true
	case "first", "last", "take", "drop", "take_while", "drop_while", "slice", "values_at":
		return Slice, true
	case "count", "size", "length", "empty?":
		return Count, true
	case "group_by", "partition", "tally", "chunk_while", "slice_when", "each_slice", "chunk":
		return Group, true
	case "sort", "sort_by", "min_by", "max_by", "min", "max", "minmax", "reverse":
		return Sort, true
	case "reduce", "inject", "sum":
		return Reduce, true
	case "find", "detect", "any?", "all?", "none?", "include?", "find_index", "index", "member?":
		return Search, true
	case "each", "each_with_index", "each_with_object", "reverse_each":
		return Iterate, true
	}
	return 0, false
}

func pythonMethod(name string) (Tag, bool) {
	switch name {
	case "sort", "reverse":
		return Sort, true
	case "index":
		return Search, true
	case "count":
		return Count, true
	}
	return 0, false
}

func jsMethod(name string) (Tag, bool) {
	switch name {
	case "filter":
		return Filter, true
	case "map", "flatMap":
		return Map, true
	case "slice", "at":
		return Slice, true
	case "length":
		return Count, true
	case "sort", "toSorted", "reverse", "toReversed":
		return Sort, true
	case "reduce", "reduceRight":
		return Reduce, true
	case "find", "findIndex", "findLast", "findLastIndex", "some", "every", "includes", "indexOf":
		return Search, true
	case "forEach":
		return Iterate, true
	}
	return 0, false
}

func methodTag(lang Language, name string) (Tag, bool) {
	switch lang {
	case Ruby:
		return rubyMethod(name)
	case Python:
		return pythonMethod(name)
	case JavaScript:
		return jsMethod(name)
	}
	return 0, false
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
