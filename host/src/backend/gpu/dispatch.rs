//! Compute pipelines (created once per shader, through a pipeline cache) and
//! the dispatch recorder with timestamp queries.

use std::sync::Arc;

use vulkano::buffer::{BufferContents, Subbuffer};
use vulkano::command_buffer::{AutoCommandBufferBuilder, PrimaryAutoCommandBuffer};
use vulkano::descriptor_set::{DescriptorSet, WriteDescriptorSet};
use vulkano::pipeline::compute::ComputePipelineCreateInfo;
use vulkano::pipeline::layout::PipelineDescriptorSetLayoutCreateInfo;
use vulkano::pipeline::{
    ComputePipeline, Pipeline, PipelineBindPoint, PipelineLayout, PipelineShaderStageCreateInfo,
};
use vulkano::query::{QueryPool, QueryPoolCreateInfo, QueryResultFlags, QueryType};
use vulkano::shader::{ShaderModule, ShaderModuleCreateInfo, SpecializationConstant};
use vulkano::sync::PipelineStage;

use super::{error_chain, Gpu, GpuError};
use crate::shaders::Shader;

/// One compute dispatch: a shader, its specialization constants, its
/// storage buffers (set 0, bindings 0..n in order), its push constants and
/// the workgroup counts.
#[derive(Debug, Clone)]
pub struct Dispatch {
    shader: &'static Shader,
    constants: Vec<(u32, u32)>,
    buffers: Vec<Subbuffer<[u8]>>,
    push: Vec<u32>,
    groups: [u32; 3],
    /// Buffers filled with zeros just before the dispatch.
    zeroing: Vec<Subbuffer<[u32]>>,
}

impl Dispatch {
    /// A dispatch of `shader` over `groups` workgroups.
    pub fn new(shader: &'static Shader, groups: [u32; 3]) -> Self {
        Dispatch {
            shader,
            constants: Vec::new(),
            buffers: Vec::new(),
            push: Vec::new(),
            groups,
            zeroing: Vec::new(),
        }
    }

    /// Sets the 32-bit specialization constant `constant_id = id` (the
    /// shader's default where not set). Each set of values is its own
    /// pipeline, which the driver compiles with the values folded in.
    pub fn constant(mut self, id: u32, value: u32) -> Self {
        self.constants.retain(|&(i, _)| i != id);
        self.constants.push((id, value));
        self.constants.sort_unstable();
        self
    }

    /// Binds the next storage buffer (binding = number of buffers bound so far).
    pub fn buffer<T: BufferContents>(mut self, buf: &Subbuffer<[T]>) -> Self {
        self.buffers.push(buf.as_bytes().clone());
        self
    }

    /// Fills `buf` with zeros in the same command buffer, just before the
    /// dispatch: what [`Gpu::zeroed`] does with a submission of its own,
    /// which costs a round trip to the device per buffer. Words only, as
    /// the fill writes whole words.
    pub fn zeroing(mut self, buf: &Subbuffer<[u32]>) -> Self {
        self.zeroing.push(buf.clone());
        self
    }

    /// The name of the shader it dispatches (as [`Gpu::kernel_tally`] counts it).
    pub fn shader_name(&self) -> &'static str {
        self.shader.name
    }

    /// Sets the push constants: exactly the words the shader declares.
    pub fn push(mut self, words: &[u32]) -> Self {
        self.push = words.to_vec();
        self
    }
}

/// GPU time of a [`Gpu::run`], from timestamp queries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timing {
    /// Nanoseconds of each dispatch, in order (empty where the queue has no timestamps).
    pub dispatch_ns: Vec<f64>,
}

impl Timing {
    /// Sum over all dispatches, in nanoseconds.
    pub fn total_ns(&self) -> f64 {
        self.dispatch_ns.iter().sum()
    }
}

macro_rules! push_fixed {
    ($builder:expr, $layout:expr, $words:expr, $($n:literal)*) => {
        match $words.len() {
            0 => Ok(()),
            $($n => {
                let arr: [u32; $n] = $words.try_into().expect("length checked");
                $builder.push_constants($layout, 0, arr).map(|_| ())
            })*
            n => return Err(GpuError::Limit(format!("{n} push-constant words (at most 32)"))),
        }
    };
}

impl Gpu {
    /// The compute pipeline of `shader` with the 32-bit specialization
    /// constants `constants` (`(id, value)`, sorted by id), created on first
    /// use and cached.
    pub fn pipeline(
        &self,
        shader: &'static Shader,
        constants: &[(u32, u32)],
    ) -> Result<Arc<ComputePipeline>, GpuError> {
        let mut cache = self.pipelines.lock().expect("pipeline cache poisoned");
        let key = (shader.name, constants.to_vec());
        if let Some(p) = cache.get(&key) {
            return Ok(p.clone());
        }
        let err = |detail: String| GpuError::Pipeline {
            shader: shader.name,
            detail,
        };
        let words =
            vulkano::shader::spirv::bytes_to_words(shader.spirv).map_err(|e| err(e.to_string()))?;
        // SAFETY: the SPIR-V was produced by glslc and checked by spirv-val
        // at build time (host/build.rs); vulkano validates it against the
        // enabled device features here as well.
        let module =
            unsafe { ShaderModule::new(self.device.clone(), ShaderModuleCreateInfo::new(&words)) }
                .map_err(|e| err(error_chain(&e)))?;
        let entry = if constants.is_empty() {
            module.entry_point("main")
        } else {
            let values = constants
                .iter()
                .map(|&(id, v)| (id, SpecializationConstant::U32(v)))
                .collect();
            module
                .specialize(values)
                .map_err(|e| err(error_chain(&*e)))?
                .entry_point("main")
        };
        let entry = entry.ok_or_else(|| err("no `main` entry point".into()))?;
        let stage = PipelineShaderStageCreateInfo::new(entry);
        let layout_info = PipelineDescriptorSetLayoutCreateInfo::from_stages([&stage])
            .into_pipeline_layout_create_info(self.device.clone())
            .map_err(|e| err(format!("{e:?}")))?;
        let layout = PipelineLayout::new(self.device.clone(), layout_info)
            .map_err(|e| err(error_chain(&e)))?;
        let pipeline = ComputePipeline::new(
            self.device.clone(),
            Some(self.pipeline_cache.clone()),
            ComputePipelineCreateInfo::stage_layout(stage, layout),
        )
        .map_err(|e| err(error_chain(&e)))?;
        cache.insert(key, pipeline.clone());
        Ok(pipeline)
    }

    /// Records `dispatches` in order into one command buffer (vulkano inserts
    /// the barriers their buffer accesses need), submits it and waits.
    pub fn run(&self, dispatches: &[Dispatch]) -> Result<Timing, GpuError> {
        let max = self.info.max_workgroup_count_x;
        for d in dispatches {
            if d.groups.iter().any(|&g| g > max) {
                return Err(GpuError::Limit(format!(
                    "shader `{}` needs {:?} workgroups; the device allows {max} per dimension",
                    d.shader.name, d.groups
                )));
            }
        }
        let mut pipelines = Vec::with_capacity(dispatches.len());
        for d in dispatches {
            pipelines.push(self.pipeline(d.shader, &d.constants)?);
        }
        let mut index = 0;
        let mut record = |b: &mut AutoCommandBufferBuilder<PrimaryAutoCommandBuffer>,
                          pool: Option<&Arc<QueryPool>>|
         -> Result<(), GpuError> {
            let d = &dispatches[index];
            let pipeline = &pipelines[index];
            index += 1;
            self.record_dispatch(b, pipeline, d)?;
            if let Some(pool) = pool {
                // SAFETY: the pool's queries were reset at the start of this
                // command buffer and each index is written once.
                unsafe {
                    b.write_timestamp(pool.clone(), index as u32, PipelineStage::AllCommands)
                        .map_err(|e| GpuError::Command(error_chain(&*e)))?;
                }
            }
            Ok(())
        };
        self.timed(dispatches.len() as u32, |b, pool| {
            for _ in 0..dispatches.len() {
                record(b, pool)?;
            }
            Ok(())
        })
        .map(|dispatch_ns| {
            let names: Vec<&'static str> = dispatches.iter().map(|d| d.shader.name).collect();
            self.count_dispatches(&names, &dispatch_ns);
            Timing { dispatch_ns }
        })
    }

    pub(super) fn record_dispatch(
        &self,
        b: &mut AutoCommandBufferBuilder<PrimaryAutoCommandBuffer>,
        pipeline: &Arc<ComputePipeline>,
        d: &Dispatch,
    ) -> Result<(), GpuError> {
        let cmd = |e: Box<vulkano::ValidationError>| GpuError::Command(error_chain(&*e));
        let layout = pipeline.layout().clone();
        for buf in &d.zeroing {
            b.fill_buffer(buf.clone(), 0).map_err(cmd)?;
        }
        b.bind_pipeline_compute(pipeline.clone()).map_err(cmd)?;
        if !d.buffers.is_empty() {
            let set_layout = layout.set_layouts().first().cloned().ok_or_else(|| {
                GpuError::Command(format!(
                    "shader `{}` declares no descriptor set",
                    d.shader.name
                ))
            })?;
            let writes = d
                .buffers
                .iter()
                .enumerate()
                .map(|(i, buf)| WriteDescriptorSet::buffer(i as u32, buf.clone()));
            let set = DescriptorSet::new(self.descriptor_sets.clone(), set_layout, writes, [])
                .map_err(|e| GpuError::Command(error_chain(&e)))?;
            b.bind_descriptor_sets(PipelineBindPoint::Compute, layout.clone(), 0, set)
                .map_err(cmd)?;
        }
        push_fixed!(b, layout.clone(), d.push.as_slice(),
            1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
        .map_err(cmd)?;
        // SAFETY: every shader bounds its accesses by the sizes it is given
        // (a project rule checked by review and by the hostile-input tests).
        unsafe { b.dispatch(d.groups) }.map_err(cmd)?;
        Ok(())
    }

    /// Records `count` timed steps with `body` (which writes timestamp
    /// `i + 1` after step `i` when a query pool is given), submits, waits and
    /// returns the duration of each step in nanoseconds (empty without timestamps).
    pub(super) fn timed(
        &self,
        count: u32,
        body: impl FnOnce(
            &mut AutoCommandBufferBuilder<PrimaryAutoCommandBuffer>,
            Option<&Arc<QueryPool>>,
        ) -> Result<(), GpuError>,
    ) -> Result<Vec<f64>, GpuError> {
        let family = &self.device.physical_device().queue_family_properties()
            [self.queue.queue_family_index() as usize];
        let pool = if family.timestamp_valid_bits.is_some() && count > 0 {
            Some(
                QueryPool::new(
                    self.device.clone(),
                    QueryPoolCreateInfo {
                        query_count: count + 1,
                        ..QueryPoolCreateInfo::query_type(QueryType::Timestamp)
                    },
                )
                .map_err(|e| GpuError::Command(error_chain(&e)))?,
            )
        } else {
            None
        };
        let mut b = self.builder()?;
        // Before the first timestamp: not part of any step's time.
        self.record_warm_up(&mut b)?;
        if let Some(pool) = &pool {
            // SAFETY: the pool is new and used by this command buffer only.
            unsafe {
                b.reset_query_pool(pool.clone(), 0..count + 1)
                    .map_err(|e| GpuError::Command(error_chain(&*e)))?;
                b.write_timestamp(pool.clone(), 0, PipelineStage::AllCommands)
                    .map_err(|e| GpuError::Command(error_chain(&*e)))?;
            }
        }
        body(&mut b, pool.as_ref())?;
        self.submit_and_wait(b)?;
        let Some(pool) = pool else {
            return Ok(Vec::new());
        };
        let mut ticks = vec![0u64; count as usize + 1];
        pool.get_results(0..count + 1, &mut ticks, QueryResultFlags::WAIT)
            .map_err(|e| GpuError::Command(error_chain(&e)))?;
        let period = self.info.timestamp_period_ns as f64;
        Ok(ticks
            .windows(2)
            .map(|w| w[1].wrapping_sub(w[0]) as f64 * period)
            .collect())
    }

    /// Times a single recorded step (e.g. a buffer copy).
    pub(super) fn time_commands(
        &self,
        body: impl FnOnce(
            &mut AutoCommandBufferBuilder<PrimaryAutoCommandBuffer>,
        ) -> Result<(), GpuError>,
    ) -> Result<Option<f64>, GpuError> {
        let ns = self.timed(1, |b, pool| {
            body(b)?;
            if let Some(pool) = pool {
                // SAFETY: query 1 of a freshly reset pool, written once.
                unsafe {
                    b.write_timestamp(pool.clone(), 1, PipelineStage::AllCommands)
                        .map_err(|e| GpuError::Command(error_chain(&*e)))?;
                }
            }
            Ok(())
        })?;
        Ok(ns.first().copied())
    }
}
