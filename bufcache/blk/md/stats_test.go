package md

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStatsSub fills every counter of two snapshots with distinct values
// and checks that Sub subtracts each one: a counter added to Stats and
// left out of Sub fails here.
func TestStatsSub(t *testing.T) {
	var later, earlier Stats
	lv, ev := reflect.ValueOf(&later).Elem(), reflect.ValueOf(&earlier).Elem()
	for i := range lv.NumField() {
		lv.Field(i).SetUint(uint64(1000 + 7*i))
		ev.Field(i).SetUint(uint64(3 * i))
	}
	d := reflect.ValueOf(later.Sub(earlier))
	for i := range d.NumField() {
		assert.Equal(t, uint64(1000+4*i), d.Field(i).Uint(), lv.Type().Field(i).Name)
	}
}
