package kernels

// Test helpers of this package for the external tests (package
// kernels_test: nn_test.go, scan_emu_test.go).
var (
	PTXParams      = ptxParams
	ArgsMatchPTX   = argsMatchPTX
	QuantF16       = quantF16
	WidenF16       = widen
	GenScores      = genScores
	SurvivorsEqual = survivorsEqual
	U32Bytes       = u32bytes
	PairsBytes     = pairBytes
	I8Problem      = i8Problem
	I8Bytes        = i8bytes
)
