// Package detect finds, in code a model generated, whether it reads the
// conversation history and how it queries it: the static scan that fills
// a record's history_access_detected and history_query_patterns.
//
// # What it finds
//
// Access is the history named in code: the identifier conversation_history
// (or names you add with [New]) as a variable or a field, or as the key of
// a subscript or lookup: context[:conversation_history],
// context["conversation_history"], context.conversation_history,
// ctx["conversation_history"], context.fetch(:conversation_history, []),
// context.get("conversation_history"). Simple aliases are followed inside
// one snippet: after h = context[:conversation_history], h is the history,
// and so is recent = h.last(3). Similar names (conversation_history_size)
// are other names; comments and string literals are not code.
//
// The query patterns are a stable set of tags ([Tag]): filter, map, slice,
// count, group, sort, reduce, search and iterate, read from the operations
// applied to the history and chained after them, per language:
//
//   - Ruby: select/filter/reject/find_all/grep (filter), map/collect/
//     flat_map/pluck (map), first/last/take/drop/[-3..]/slice (slice),
//     count/size/length (count), group_by/partition/tally/chunk_while
//     (group), sort_by/min_by/max_by (sort), reduce/inject/sum (reduce),
//     find/detect/any?/include? (search), each (iterate);
//   - Python: comprehensions (filter with if, map when they transform),
//     filter(), map(), h[-3:], len(), itertools.groupby/Counter, sorted,
//     sum/functools.reduce, next()/any()/all()/x in h, for loops;
//   - JavaScript and TypeScript: .filter .map .slice .at .length .reduce
//     .find .some .every .sort, Object.groupBy, for...of, .forEach;
//   - Go: range loops (filter when their body has an if), len(), slicing,
//     slices.SortFunc/IndexFunc/ContainsFunc and sort.Slice.
//
// Operations inside a block on a record's fields (h.map { |r|
// r[:args].first }) are not queries of the history.
//
// # Where the code comes from
//
// [Scan] reads a snippet in a known language; [ScanOutput] a model's whole
// output (fenced blocks, tagged or not, or unfenced code; prose is not
// code); [ScanToolArguments] the JSON arguments of a tool call that carry
// code. A [Result] says whether the history was accessed, which tags were
// found, in which languages, and where ([Finding] line spans).
//
// # Cost
//
// Text that does not contain a history name is rejected by a substring
// search before anything else, without allocating; other text is read
// once, by a small lexer per language, in time linear in its length.
package detect
