package pulumi

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// AWS kinds; config -> inputs is documented in docs/kinds.md.

func init() {
	register(&Kind{
		Name:      "RDS",
		Tokens:    []string{"aws:rds/instance:Instance"},
		ReplaceOn: []string{"engine.type", "identifier", "database.name", "database.username", "instance.storage.encrypted"},
		Actual: []StateField{
			{"instance_id", "instance", "id"}, {"endpoint", "instance", "address"}, {"port", "instance", "port"},
			{"status", "instance", "status"}, {"engine", "instance", "engine"},
			{"engine_version", "instance", "engineVersionActual"}, {"instance_class", "instance", "instanceClass"},
			{"allocated_storage", "instance", "allocatedStorage"}, {"multi_az", "instance", "multiAz"},
		},
		Register: registerRDS,
	})
	register(&Kind{
		Name:      "ElastiCacheRedis",
		Tokens:    []string{"aws:elasticache/replicationGroup:ReplicationGroup"},
		ReplaceOn: []string{"id", "port", "encryption.atRest", "network.subnetGroup"},
		Actual: []StateField{
			{"cluster_id", "replicationGroup", "id"},
			{"configuration_endpoint", "replicationGroup", "configurationEndpointAddress"},
			{"primary_endpoint", "replicationGroup", "primaryEndpointAddress"},
			{"port", "replicationGroup", "port"}, {"engine", "replicationGroup", "engine"},
			{"engine_version", "replicationGroup", "engineVersionActual"},
			{"num_cache_nodes", "replicationGroup", "numCacheClusters"}, {"node_type", "replicationGroup", "nodeType"},
		},
		Register: registerRedis,
	})
	register(&Kind{
		Name: "MicroService",
		Tokens: []string{"aws:ecs/taskDefinition:TaskDefinition", "aws:lb/targetGroup:TargetGroup",
			"aws:ecs/service:Service", "aws:appautoscaling/target:Target", "aws:appautoscaling/policy:Policy"},
		Suffixes:  []string{"-cpu"},
		ReplaceOn: []string{"cluster", "port", "protocol", "network.vpcId"},
		Actual: []StateField{
			{"service_arn", "service", "id"}, {"service_name", "service", "name"},
			{"task_definition", "taskDefinition", "arn"}, {"desired_count", "service", "desiredCount"},
			{"task_definition_revision", "taskDefinition", "revision"}, {"target_group_arn", "targetGroup", "arn"},
			{"min_capacity", "scalingTarget", "minCapacity"}, {"max_capacity", "scalingTarget", "maxCapacity"},
		},
		Register: registerMicroService,
	})
}

func registerRDS(r *Registration) (*Registered, error) {
	c := r.Config
	class := str(c, "instance.class", "")
	if class == "" {
		return nil, fmt.Errorf("%s: config instance.class is required (an RDS instance class such as db.t4g.medium)", r.Address)
	}
	f := r.fields()
	storage := f.num("instance.storage.allocatedGB", 20)
	multiAZ := f.boolean("instance.multiAZ", false)
	skipSnap := f.boolean("deletion.skipFinalSnapshot", false)
	sgs := f.list("network.securityGroups")
	if f.err != nil {
		return nil, f.err
	}
	in := pulumi.Map{
		"engine":            pulumi.String(str(c, "engine.type", "postgres")),
		"instanceClass":     pulumi.String(class),
		"allocatedStorage":  pulumi.Int(int(storage)),
		"multiAz":           pulumi.Bool(multiAZ),
		"username":          pulumi.String(str(c, "database.username", "deployer")),
		"skipFinalSnapshot": pulumi.Bool(skipSnap),
		"tags":              r.tags(),
	}
	f.setString(in, "engineVersion", "engine.version")
	f.setString(in, "storageType", "instance.storage.type")
	f.setBool(in, "storageEncrypted", "instance.storage.encrypted")
	f.setString(in, "identifier", "identifier")
	f.setString(in, "dbName", "database.name")
	f.setString(in, "dbSubnetGroupName", "network.subnetGroup")
	f.setInt(in, "backupRetentionPeriod", "backup.retentionDays")
	f.setBool(in, "deletionProtection", "deletion.protection")
	if f.err != nil {
		return nil, f.err
	}
	if len(sgs) > 0 {
		in["vpcSecurityGroupIds"] = pulumi.ToStringArray(sgs)
	}
	if pw := get(c, "database.password"); pw != nil {
		in["password"] = pulumi.ToSecret(pulumi.String(fmt.Sprint(pw)))
	} else {
		in["manageMasterUserPassword"] = pulumi.Bool(true)
	}
	if !skipSnap {
		in["finalSnapshotIdentifier"] = pulumi.String(r.Name + "-final")
	}
	db, err := r.child("aws:rds/instance:Instance", r.Name, in)
	if err != nil {
		return nil, err
	}
	return &Registered{
		Outputs: pulumi.Map{
			"endpoint": db.Out("address"),
			"port":     asString(db.Out("port")),
			"address":  db.Out("endpoint"),
			"arn":      db.Out("arn"),
		},
		Children: map[string]*Child{"instance": db},
		Primary:  "instance",
	}, nil
}

func registerRedis(r *Registration) (*Registered, error) {
	c := r.Config
	nodeType := str(c, "cluster.nodeType", "")
	if nodeType == "" {
		return nil, fmt.Errorf("%s: config cluster.nodeType is required (an ElastiCache node type such as cache.t4g.small)", r.Address)
	}
	f := r.fields()
	nodes := f.num("cluster.numNodes", 1)
	port := f.num("port", 6379)
	atRest := f.boolean("encryption.atRest", true)
	sgs := f.list("network.securityGroups")
	if f.err != nil {
		return nil, f.err
	}
	in := pulumi.Map{
		"description":              pulumi.String(str(c, "description", "deployer "+r.Address)),
		"engine":                   pulumi.String("redis"),
		"nodeType":                 pulumi.String(nodeType),
		"numCacheClusters":         pulumi.Int(int(nodes)),
		"automaticFailoverEnabled": pulumi.Bool(nodes > 1),
		"port":                     pulumi.Int(int(port)),
		"atRestEncryptionEnabled":  pulumi.Bool(atRest),
		"tags":                     r.tags(),
	}
	f.setString(in, "engineVersion", "engine.version")
	f.setString(in, "parameterGroupName", "engine.parameterGroup")
	f.setString(in, "replicationGroupId", "id")
	f.setBool(in, "multiAzEnabled", "cluster.multiAZ")
	f.setBool(in, "transitEncryptionEnabled", "encryption.inTransit")
	f.setString(in, "subnetGroupName", "network.subnetGroup")
	if f.err != nil {
		return nil, f.err
	}
	if len(sgs) > 0 {
		in["securityGroupIds"] = pulumi.ToStringArray(sgs)
	}
	rg, err := r.child("aws:elasticache/replicationGroup:ReplicationGroup", r.Name, in)
	if err != nil {
		return nil, err
	}
	endpoint := pulumi.All(rg.Out("primaryEndpointAddress"), rg.Out("configurationEndpointAddress")).ApplyT(
		func(v []any) any {
			if s, _ := v[0].(string); s != "" {
				return s
			}
			return v[1]
		}).(pulumi.AnyOutput)
	return &Registered{
		Outputs: pulumi.Map{
			"endpoint":        endpoint,
			"reader_endpoint": rg.Out("readerEndpointAddress"),
			"port":            asString(rg.Out("port")),
		},
		Children: map[string]*Child{"replicationGroup": rg},
		Primary:  "replicationGroup",
	}, nil
}

// microService is one MicroService being registered: its config read
// once (the image, the numbers with their defaults, the network lists) and
// the children made from it, in the order registerMicroService makes them.
type microService struct {
	r            *Registration
	f            *fields
	image        string
	nums         map[string]float64
	port         int
	subnets, sgs []string
	cluster      string
}

func registerMicroService(r *Registration) (*Registered, error) {
	m, err := newMicroService(r)
	if err != nil {
		return nil, err
	}
	td, err := m.taskDefinition()
	if err != nil {
		return nil, err
	}
	tg, err := m.targetGroup()
	if err != nil {
		return nil, err
	}
	svc, err := m.service(td, tg)
	if err != nil {
		return nil, err
	}
	st, sp, err := m.scaling(svc)
	if err != nil {
		return nil, err
	}
	outs := pulumi.Map{
		"url":               pulumi.String(fmt.Sprintf("http://%s.%s.local:%d", r.Name, r.Ctx.Project(), m.port)),
		"targetGroupArn":    tg.Out("arn"),
		"serviceName":       svc.Out("name"),
		"taskDefinitionArn": td.Out("arn"),
	}
	setIf(outs, "loadBalancerUrl", r.Config, "loadBalancer.url")
	return &Registered{
		Outputs: outs,
		Children: map[string]*Child{"taskDefinition": td, "targetGroup": tg, "service": svc,
			"scalingTarget": st, "scalingPolicy": sp},
	}, nil
}

// newMicroService reads the config of r: image.repository is required;
// the numbers take their defaults, and maxReplicas is at least minReplicas.
func newMicroService(r *Registration) (*microService, error) {
	c := r.Config
	repo := str(c, "image.repository", "")
	if repo == "" {
		return nil, fmt.Errorf("%s: config image.repository is required (a container image repository)", r.Address)
	}
	m := &microService{r: r, f: r.fields(), image: repo + ":" + str(c, "image.tag", "latest"), cluster: str(c, "cluster", "default")}
	m.nums = map[string]float64{"resources.cpu": 256, "resources.memory": 512, "port": 8080,
		"scaling.minReplicas": 1, "scaling.maxReplicas": 1, "scaling.targetCPU": 70}
	for _, path := range slices.Sorted(maps.Keys(m.nums)) {
		m.nums[path] = m.f.num(path, m.nums[path])
	}
	if m.nums["scaling.maxReplicas"] < m.nums["scaling.minReplicas"] {
		m.nums["scaling.maxReplicas"] = m.nums["scaling.minReplicas"]
	}
	m.subnets = m.f.list("network.subnets")
	m.sgs = m.f.list("network.securityGroups")
	if m.f.err != nil {
		return nil, m.f.err
	}
	m.port = int(m.nums["port"])
	return m, nil
}

// containerDefinitions is the task's one container as JSON, marked secret
// when an environment variable holds a secret value.
func (m *microService) containerDefinitions() (pulumi.Input, error) {
	r, c := m.r, m.r.Config
	container := map[string]any{
		"name": r.Name, "image": m.image, "essential": true,
		"portMappings": []any{map[string]any{"containerPort": m.port, "protocol": "tcp"}},
	}
	secretEnv := false
	if env, ok := asMap(get(c, "environment")); ok {
		var vars []any
		for _, k := range keys(env) {
			// Secret values are written plain into the definitions, which
			// are then marked secret as a whole.
			secretEnv = secretEnv || isSecretAt(c, "environment."+k)
			vars = append(vars, map[string]any{"name": k, "value": fmt.Sprint(get(env, k))})
		}
		container["environment"] = vars
	}
	defs, err := json.Marshal([]any{container})
	if err != nil {
		return nil, fmt.Errorf("%s: encode container definitions: %w", r.Address, err)
	}
	var defsIn pulumi.Input = pulumi.String(string(defs))
	if secretEnv {
		defsIn = pulumi.ToSecret(defsIn)
	}
	return defsIn, nil
}

// taskDefinition registers the Fargate task definition.
func (m *microService) taskDefinition() (*Child, error) {
	r, f := m.r, m.f
	defsIn, err := m.containerDefinitions()
	if err != nil {
		return nil, err
	}
	tdIn := pulumi.Map{
		"family":                  pulumi.String(r.Ctx.Project() + "-" + r.Ctx.Stack() + "-" + r.Name),
		"containerDefinitions":    defsIn,
		"cpu":                     pulumi.String(fmt.Sprint(int(m.nums["resources.cpu"]))),
		"memory":                  pulumi.String(fmt.Sprint(int(m.nums["resources.memory"]))),
		"networkMode":             pulumi.String("awsvpc"),
		"requiresCompatibilities": pulumi.ToStringArray([]string{"FARGATE"}),
		"tags":                    r.tags(),
	}
	f.setString(tdIn, "executionRoleArn", "executionRoleArn")
	f.setString(tdIn, "taskRoleArn", "taskRoleArn")
	if f.err != nil {
		return nil, f.err
	}
	return r.child("aws:ecs/taskDefinition:TaskDefinition", r.Name, tdIn)
}

// targetGroup registers the load balancer's target group of the port.
func (m *microService) targetGroup() (*Child, error) {
	r, c, f := m.r, m.r.Config, m.f
	tgIn := pulumi.Map{
		"port":        pulumi.Int(m.port),
		"protocol":    pulumi.String(str(c, "protocol", "HTTP")),
		"targetType":  pulumi.String("ip"),
		"healthCheck": pulumi.Map{"path": pulumi.String(str(c, "healthCheck.path", "/health"))},
		"tags":        r.tags(),
	}
	f.setString(tgIn, "vpcId", "network.vpcId")
	if f.err != nil {
		return nil, f.err
	}
	return r.child("aws:lb/targetGroup:TargetGroup", r.Name, tgIn)
}

// service registers the ECS service of td behind tg; its desired count is
// the autoscaler's after creation (IgnoreChanges).
func (m *microService) service(td, tg *Child) (*Child, error) {
	r := m.r
	svcIn := pulumi.Map{
		"cluster":        pulumi.String(m.cluster),
		"taskDefinition": td.Out("arn"),
		"desiredCount":   pulumi.Int(int(m.nums["scaling.minReplicas"])),
		"launchType":     pulumi.String("FARGATE"),
		"loadBalancers": pulumi.Array{pulumi.Map{
			"targetGroupArn": tg.Out("arn"),
			"containerName":  pulumi.String(r.Name),
			"containerPort":  pulumi.Int(m.port),
		}},
		"tags": r.tags(),
	}
	if len(m.subnets) > 0 || len(m.sgs) > 0 {
		svcIn["networkConfiguration"] = pulumi.Map{
			"subnets":        pulumi.ToStringArray(m.subnets),
			"securityGroups": pulumi.ToStringArray(m.sgs),
		}
	}
	return r.child("aws:ecs/service:Service", r.Name, svcIn, pulumi.IgnoreChanges([]string{"desiredCount"}))
}

// scaling registers the service's scaling target and its CPU
// target-tracking policy.
func (m *microService) scaling(svc *Child) (st, sp *Child, err error) {
	r, cluster := m.r, m.cluster
	resourceID := svc.Out("name").ApplyT(func(name any) string {
		return fmt.Sprintf("service/%s/%v", cluster, name)
	}).(pulumi.StringOutput)
	st, err = r.child("aws:appautoscaling/target:Target", r.Name, pulumi.Map{
		"minCapacity":       pulumi.Int(int(m.nums["scaling.minReplicas"])),
		"maxCapacity":       pulumi.Int(int(m.nums["scaling.maxReplicas"])),
		"resourceId":        resourceID,
		"scalableDimension": pulumi.String("ecs:service:DesiredCount"),
		"serviceNamespace":  pulumi.String("ecs"),
	})
	if err != nil {
		return nil, nil, err
	}
	sp, err = r.child("aws:appautoscaling/policy:Policy", r.Name+"-cpu", pulumi.Map{
		"policyType":        pulumi.String("TargetTrackingScaling"),
		"resourceId":        st.Out("resourceId"),
		"scalableDimension": st.Out("scalableDimension"),
		"serviceNamespace":  st.Out("serviceNamespace"),
		"targetTrackingScalingPolicyConfiguration": pulumi.Map{
			"targetValue": pulumi.Float64(m.nums["scaling.targetCPU"]),
			"predefinedMetricSpecification": pulumi.Map{
				"predefinedMetricType": pulumi.String("ECSServiceAverageCPUUtilization"),
			},
		},
	})
	return st, sp, err
}

// The set* methods set the input key of m from the config path when it is
// present, as the type the pulumi-aws property has
// (testdata/aws-schema.json): a value of another type is the fields' error,
// naming the path.

// setString sets a string property: a string as written, a number in
// decimal (`engine.version: 16` is "16"; YAML reads an unquoted 7.10 as the
// number 7.1, so a version is best quoted).
func (f *fields) setString(m pulumi.Map, key, path string) {
	switch v := get(f.cfg, path).(type) {
	case nil:
	case string:
		m[key] = pulumi.String(v)
	case int, int64, float64, json.Number:
		m[key] = pulumi.String(decimal(v))
	default:
		f.fail(fmt.Errorf("config %s: %v is not a string", path, v))
	}
}

// setInt sets an integer property from a whole number.
func (f *fields) setInt(m pulumi.Map, key, path string) {
	if get(f.cfg, path) == nil {
		return
	}
	n := f.num(path, 0)
	if n != math.Trunc(n) {
		f.fail(fmt.Errorf("config %s: %v is not a whole number", path, n))
	}
	if f.err == nil {
		m[key] = pulumi.Int(int(n))
	}
}

// setBool sets a boolean property from true or false.
func (f *fields) setBool(m pulumi.Map, key, path string) {
	if get(f.cfg, path) == nil {
		return
	}
	if b := f.boolean(path, false); f.err == nil {
		m[key] = pulumi.Bool(b)
	}
}

// decimal writes a number as its shortest decimal (16, 7.1).
func decimal(v any) string {
	switch n := v.(type) {
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64)
	case json.Number:
		return n.String()
	}
	return fmt.Sprint(v)
}

// asString renders a number output as a string, as the example state's outputs show (docs/state-format.md#example)
// ports ("5432").
func asString(o pulumi.AnyOutput) pulumi.AnyOutput {
	return o.ApplyT(func(v any) any {
		switch n := v.(type) {
		case nil:
			return nil
		case float64:
			return fmt.Sprintf("%d", int64(n))
		default:
			return fmt.Sprint(n)
		}
	}).(pulumi.AnyOutput)
}
