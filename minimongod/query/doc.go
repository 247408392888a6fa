// Package query owns minimongod's document-level query semantics: MongoDB's
// BSON comparison order (Compare), filter matching (Compile/Matcher) with the
// index-planner hints derived from a filter (Predicates, IDEquality),
// projections, update operators and replacements (CompileUpdate), and sort
// specifications (CompileSort). Everything works on raw BSON bytes.
package query
