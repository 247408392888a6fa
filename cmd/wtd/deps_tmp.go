package main

import (
	_ "github.com/HdrHistogram/hdrhistogram-go"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/jedib0t/go-pretty/v6/table"
	_ "github.com/robfig/cron/v3"
	_ "github.com/shirou/gopsutil/v4/cpu"
	_ "github.com/spf13/cobra"
	_ "github.com/yuin/gopher-lua"
	_ "go.mongodb.org/mongo-driver/v2/mongo"
	_ "go.yaml.in/yaml/v3"
	_ "modernc.org/sqlite"
)

func main() {}
