package leadership_test

import "github.com/leadership-go/leadership/store/memory"

func memoryStop(name string)  { memory.StopServer(name) }
func memoryStart(name string) { memory.StartServer(name) }
