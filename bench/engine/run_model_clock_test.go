package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
)

const timedScenario = `device size=64M sector=512
open a rdwr
pwrite a off=0 len=4K repeat=1024 fill=0x11
fsync a
dropcaches a
pread a off=0 len=4K repeat=1024
pread a off=0 len=4K repeat=1024
close a
`

func TestRunModelTimed(t *testing.T) {
	s, err := scenario.Parse("timed.scn", timedScenario)
	require.NoError(t, err)
	plain, err := engine.RunModel(context.Background(), s, engine.ModelOptions{})
	require.NoError(t, err)
	assert.Nil(t, plain.Wall, "untimed without a profile")
	timed, err := engine.RunModel(context.Background(), s, engine.ModelOptions{Profile: timing.X86Server()})
	require.NoError(t, err)
	require.NotNil(t, timed.Wall)
	for i := range timed.Ops {
		assert.Equal(t, plain.Ops[i].Counters, timed.Ops[i].Counters, "op %d: the clock changes no count", i+1)
		require.NotNil(t, timed.Ops[i].Wall, "op %d", i+1)
	}
	ns := func(i int) float64 { return float64(timed.Ops[i].Wall.MaxNs) }
	disk := engine.LoopDisk()
	// 4 MiB written back through the loop disk cannot take less than its
	// transfer time; the cold reads pay at least one request's latency
	// per readahead window and are slower than the cached ones.
	assert.GreaterOrEqual(t, ns(2), float64(4<<20)*1e3/disk.MBps, "fsync")
	assert.Greater(t, ns(4), disk.LatencyNS*(4<<20)/(256<<10), "cold reads")
	assert.Greater(t, ns(4), 3*ns(5), "cold reads against cached ones")
}

func TestRunModelRefusesRules(t *testing.T) {
	s, err := scenario.Parse("ruled.scn", "device size=64M sector=512 wbps=20M\nopen a rdwr\nclose a\n")
	require.NoError(t, err)
	_, err = engine.RunModel(context.Background(), s, engine.ModelOptions{Profile: timing.X86Server()})
	assert.ErrorIs(t, err, engine.ErrRulesNotModelled)
}
