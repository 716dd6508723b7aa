package io.warmmetal.controller.scheduling;

import java.util.Map;

/**
 * A shape of the fleet as the scheduler sees it: its labels (instance type, arch, capacity type, WarmMetal's
 * cpu/memory/gpu labels), what a node of it can allocate, its price, and how many machines of it are warm now.
 */
public record InstanceType(String name, Map<String, String> labels, Resources allocatable, double price,
    int warm) {}
