package cuda

import "sync"

// shared holds the Devices handed out by Acquire: one per ordinal, closed
// when the last holder releases it.
var shared struct {
	mu   sync.Mutex
	devs map[int]*sharedDev
}

type sharedDev struct {
	dev  *Device
	refs int
}

// Acquire returns the process's Device for ordinal, opening it on first
// use, so that every model on one GPU (the encoder, the reranker) is driven
// by the same owner goroutine. The caller must call release exactly once
// and must not Close the Device; the last release closes it. Errors are
// Open's (matching ErrNoDevice without a usable GPU). Safe for concurrent use.
func Acquire(ordinal int) (dev *Device, release func(), err error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.devs == nil {
		shared.devs = map[int]*sharedDev{}
	}
	s, ok := shared.devs[ordinal]
	if !ok {
		d, err := Open(ordinal)
		if err != nil {
			return nil, nil, err
		}
		s = &sharedDev{dev: d}
		shared.devs[ordinal] = s
	}
	s.refs++
	var once sync.Once
	return s.dev, func() {
		once.Do(func() {
			shared.mu.Lock()
			defer shared.mu.Unlock()
			if s.refs--; s.refs == 0 {
				delete(shared.devs, ordinal)
				s.dev.Close()
			}
		})
	}, nil
}
