package leadership

import (
	"context"

	"github.com/leadership-go/leadership/store/memory"
)

func stopServer(name string)  { memory.StopServer(name) }
func startServer(name string) { memory.StartServer(name) }

func openMemory(name string) (*memory.Store, error) {
	return memory.Open(context.Background(), memory.Config{Name: name})
}

func loseData(name string) { memory.LoseData(name) }
