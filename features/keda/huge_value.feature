Feature: A huge trigger value (1e20) reaches the HPA whole, and the release decides the rest
  kubernetes#126892: a KEDA trigger far beyond its target scaled the
  workload down instead of up. What the HPA receives, from KEDA's code:

  KEDA's metrics adapter answers with scalers.GenerateMetricInMili. Through
  KEDA 2.19 that was resource.NewMilliQuantity(int64(v*1000)), and Go's
  int64() of 1e23 on amd64 is math.MinInt64: the HPA got
  -9223372036854775808m. kedacore/keda#7534 (merged 2026-03-10, so in
  2.20; we pin 2.20.1) builds the quantity from fmt.Sprintf("%.3f", v)
  instead, and the HPA receives 1e20 as the quantity 100E.

  The HPA reads an External value with Quantity.MilliValue(). 100E parses
  to an int64 amount (100, scale 18); MilliValue needs 100 * 10^21, which
  overflows, and apimachinery's positiveScaleInt64 then returns 0
  (Kubernetes through 1.37). From 1.38 (k/k #141305) MilliValue saturates
  at MaxInt64, GetExternalPerPodMetricReplicas caps ceil(MaxInt64 / 20000)
  at MaxInt32 (k/k #127050, since 1.34), and every int32 conversion
  saturates (k/k #141397).

  Background:
    Given a deployment "worker" with 4 pods
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
      spec:
        scaleTargetRef:
          name: worker
        minReplicaCount: 1
        maxReplicaCount: 10
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "20"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 1e20

  # Upstream: usage 0 against 20 per pod proposes 0, raised to minReplicas
  # 1; the default 300 s scale-down window, seeded with the 4 current
  # replicas, holds 4 until it has passed.
  @k8s-1.36 @k8s-1.37
  Scenario: Through 1.37 the HPA reads 0 and scales the overloaded workload down to its minimum
    When the HPA controller syncs
    Then the HPA "keda-hpa-worker" reports "s0-rabbitmq-orders" at 0
    And the deployment "worker" stays at 4 replicas for 4m45s
    When 30s pass
    Then the deployment "worker" has 1 replica

  # MaxInt32 proposed; the default scale-up policies (100% or 4 pods per
  # 15 s, the larger) allow 4 + 4 = 8, then 10 (maxReplicas).
  @k8s-1.38
  Scenario: From 1.38 the value saturates and the workload scales up to maxReplicas
    When the HPA controller syncs
    Then the deployment "worker" has 8 replicas
    And the HPA "keda-hpa-worker" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"
    When 15s pass
    Then the deployment "worker" has 10 replicas
    And the HPA "keda-hpa-worker" has condition "ScalingLimited" "True" with reason "TooManyReplicas"
