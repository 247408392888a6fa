package tune

import "math/rand/v2"

// latinHypercube returns n points of the unit cube, one in each of n equal
// slices of every coordinate (a random permutation per coordinate, a random
// place within each slice).
func latinHypercube(n, d int, rng *rand.Rand) [][]float64 {
	pts := make([][]float64, n)
	for i := range pts {
		pts[i] = make([]float64, d)
	}
	for j := range d {
		perm := rng.Perm(n)
		for i := range n {
			pts[i][j] = (float64(perm[i]) + rng.Float64()) / float64(n)
		}
	}
	return pts
}

// randomUnit is a uniform point of the unit cube.
func randomUnit(d int, rng *rand.Rand) []float64 {
	u := make([]float64, d)
	for j := range u {
		u[j] = rng.Float64()
	}
	return u
}
