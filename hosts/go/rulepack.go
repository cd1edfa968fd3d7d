package resultsanitizer

// Descriptors of the `rule-pack` interface's types, mirroring
// wit/rule-pack.wit. abi_test.go checks them against the layout the build
// computes from the WIT itself (target/components/rule-pack.layout.json).

var (
	str     = &Type{Kind: String}
	strList = &Type{Kind: List, Elem: str}

	// PackInfo is `pack-info`.
	PackInfo = &Type{Kind: Record, Name: "pack-info", Fields: []Field{
		{"name", str}, {"version", str}, {"tenant", str}, {"wit-version", str}, {"description", str},
	}}
	// RuleKind is `rule-kind`.
	RuleKind = &Type{Kind: Enum, Name: "rule-kind", Cases: []string{"secret", "path", "pii"}}
	// blank is a rule's description: lowered empty, since the pipeline
	// never reads it and the default rules' cost about 65 KB of each
	// instance's heap (the Rust and JS hosts blank it too).
	blank = &Type{Kind: String, Blank: true}

	// Rule is `rule`.
	Rule = &Type{Kind: Record, Name: "rule", Fields: []Field{
		{"id", str}, {"description", blank}, {"kind", RuleKind}, {"regex", str}, {"keywords", strList},
		{"secret-group", &Type{Kind: U32}}, {"entropy", &Type{Kind: Option, Elem: &Type{Kind: F32}}},
		{"window", &Type{Kind: U32}}, {"allow-regexes", strList}, {"stopwords", strList},
		{"strict-only", &Type{Kind: Bool}}, {"errors-only", &Type{Kind: Bool}},
		{"replacement", &Type{Kind: Option, Elem: str}},
	}}
	// BudgetOverride is `budget-override`.
	BudgetOverride = &Type{Kind: Record, Name: "budget-override", Fields: []Field{
		{"tool", str},
		{"max-bytes", &Type{Kind: Option, Elem: &Type{Kind: U64}}},
		{"max-chars", &Type{Kind: Option, Elem: &Type{Kind: U32}}},
		{"max-tokens", &Type{Kind: Option, Elem: &Type{Kind: U32}}},
	}}
	// GenericValues is `generic-values`.
	GenericValues = &Type{Kind: Record, Name: "generic-values", Fields: []Field{
		{"allow-regexes", strList}, {"code-min-length", &Type{Kind: U32}},
		{"code-min-entropy", &Type{Kind: F32}}, {"code-min-classes", &Type{Kind: U32}},
	}}
	// RuleSet is `rule-set`.
	RuleSet = &Type{Kind: Record, Name: "rule-set", Fields: []Field{
		{"rules", &Type{Kind: List, Elem: Rule}}, {"allow-regexes", strList}, {"stopwords", strList},
		{"path-roots", strList}, {"budgets", &Type{Kind: List, Elem: BudgetOverride}}, {"lenient-tools", strList},
		{"generic", GenericValues}, {"scrub-tools", strList}, {"readable-roots", strList}, {"pii-tools", strList},
		{"relax", strList},
	}}
	// Finding is `finding`.
	Finding = &Type{Kind: Record, Name: "finding", Fields: []Field{
		{"rule-id", str}, {"start", &Type{Kind: U32}}, {"end", &Type{Kind: U32}},
	}}
	// Findings is `list<finding>`, the result of `detect`.
	Findings = &Type{Kind: List, Elem: Finding}
)

// RulePackTypes are the named types of the interface.
var RulePackTypes = []*Type{PackInfo, RuleKind, Rule, BudgetOverride, GenericValues, RuleSet, Finding}
