Feature: Replay of a traffic series
  `hpa-harness replay hpa.yaml --workload deployment.yaml --series
  traffic.csv` feeds the controller the total CPU of traffic.csv, spread
  evenly over the ready pods, one sync every 15s. This scenario does the
  same step by step, and tests/replay.rs checks that the replay gives the
  replicas this scenario expects, at the same times. Each value below is
  the CSV's total at that time over the pods ready then, set just before
  the sync that reads it.

  Scenario: php-apache under the traffic of traffic.csv
    Given a deployment "php-apache" with pods:
      | pod          | cpu request |
      | php-apache-0 | 200m        |
    And the HPA:
      """
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata:
        name: php-apache
      spec:
        scaleTargetRef:
          apiVersion: apps/v1
          kind: Deployment
          name: php-apache
        minReplicas: 1
        maxReplicas: 10
        metrics:
          - type: Resource
            resource:
              name: cpu
              target:
                type: Utilization
                averageUtilization: 50
        behavior:
          scaleDown:
            stabilizationWindowSeconds: 60
      """
    # 0s: 0.05 cores over 1 pod.
    And the pods of "php-apache" report "cpu" of 50m
    When the HPA controller syncs
    Then the deployment "php-apache" has 1 replicas
    And the deployment "php-apache" stays at 1 replicas for 45s
    # 1m: 0.5 cores over 1 pod, 250% of its request: 1 + 4 pods at most.
    When the pods of "php-apache" report "cpu" of 500m
    And 15s pass
    Then the deployment "php-apache" has 5 replicas
    # 1m15s: 0.5 cores over 5 pods.
    When the pods of "php-apache" report "cpu" of 100m, 100m, 100m, 100m and 100m
    Then the deployment "php-apache" stays at 5 replicas for 45s
    # 2m: 0.9 cores over 5 pods.
    When the pods of "php-apache" report "cpu" of 180m, 180m, 180m, 180m and 180m
    And 15s pass
    Then the deployment "php-apache" has 9 replicas
    # 2m15s: 0.9 cores over 9 pods, on target.
    When the pods of "php-apache" report "cpu" of 100m, 100m, 100m, 100m, 100m, 100m, 100m, 100m and 100m
    Then the deployment "php-apache" stays at 9 replicas for 3m45s
    # 6m: 0.4 cores over 9 pods; the 60s window holds 9 until 6m45s.
    When the pods of "php-apache" report "cpu" of 44m, 44m, 44m, 44m, 44m, 44m, 44m, 44m and 44m
    Then the deployment "php-apache" stays at 9 replicas for 45s
    When 15s pass
    Then the deployment "php-apache" has 4 replicas
    # 7m: 0.4 cores over 4 pods.
    When the pods of "php-apache" report "cpu" of 100m, 100m, 100m and 100m
    Then the deployment "php-apache" stays at 4 replicas for 1m
    # 8m: 0.6 cores over 4 pods.
    When the pods of "php-apache" report "cpu" of 150m, 150m, 150m and 150m
    And 15s pass
    Then the deployment "php-apache" has 6 replicas
    # 8m15s: 0.6 cores over 6 pods.
    When the pods of "php-apache" report "cpu" of 100m, 100m, 100m, 100m, 100m and 100m
    Then the deployment "php-apache" stays at 6 replicas for 45s
    # 9m: 0.1 cores over 6 pods; down to 1 at 9m45s.
    When the pods of "php-apache" report "cpu" of 17m, 17m, 17m, 17m, 17m and 17m
    Then the deployment "php-apache" stays at 6 replicas for 45s
    When 15s pass
    Then the deployment "php-apache" has 1 replicas
    # 10m: 0.1 cores over 1 pod.
    When the pods of "php-apache" report "cpu" of 100m
    Then the deployment "php-apache" stays at 1 replicas for 4m
    # 14m: 0.05 cores.
    When the pods of "php-apache" report "cpu" of 50m
    And 15s pass
    Then the deployment "php-apache" has 1 replicas
