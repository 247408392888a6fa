package record

// Threshold is a condition a run must meet at its end (threshold{} in a
// playbook): a measure of the steps named Step at most Max, at least Min,
// or within VsBaseline ("+10%", "-5%") of the same steps of the previous
// ok run of the playbook with the same parameters. compare checks
// it; a threshold that does not hold fails the run.
type Threshold struct {
	Step    string   `json:"step"`
	Measure string   `json:"measure"`
	Max     *float64 `json:"max,omitempty"`
	Min     *float64 `json:"min,omitempty"`
	// VsBaseline is a signed percentage: "+10%" allows up to 10% more
	// than the baseline's value, "-10%" down to 10% less.
	VsBaseline string `json:"vs_baseline,omitempty"`
}
