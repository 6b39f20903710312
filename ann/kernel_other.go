//go:build !amd64 || purego

package ann

func (k *tileKernel) callAsm(q []float32, tile []float32, rows, d, dv int, out []float32) {
	panic("ann: no assembly kernel on this platform")
}
