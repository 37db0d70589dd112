package engine

// MaxBusShareForTest is maxBusShare, for the external tests.
const MaxBusShareForTest = maxBusShare
