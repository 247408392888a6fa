package main
import (
 _ "go.mongodb.org/mongo-driver/v2/mongo"
 _ "github.com/yuin/gopher-lua"
 _ "github.com/shirou/gopsutil/v4/cpu"
 _ "modernc.org/sqlite"
 _ "github.com/robfig/cron/v3"
 _ "github.com/HdrHistogram/hdrhistogram-go"
 _ "github.com/spf13/cobra"
 _ "go.yaml.in/yaml/v3"
 _ "github.com/jedib0t/go-pretty/v6/table"
 _ "github.com/google/go-cmp/cmp"
)
func main(){}
