package ann

// openGPU makes the GPU backend over an in-memory shard (NewGPU, gpu.go).
func openGPU(f *Flat, cfg GPUConfig) (Index, error) {
	g, err := NewGPU(f, cfg)
	if err != nil {
		return nil, err
	}
	return g, nil
}
