//! BERT's encoder for sentence vectors: candle tensors and kernels, arranged for the encoder's
//! batches of equal-length texts.
//!
//! Why not candle-transformers' `BertModel` as it is: it is written for any batch, so it builds
//! and adds an attention mask, runs query, key and value as three products, adds each bias and
//! each residual in a pass of its own, and computes the exact GELU with a scalar `f64` erf per
//! value (14 % of the time on short texts). Here the batches are never padded, so there is no
//! mask; query, key and value are one product (the query weights carry the 1/sqrt(head size)
//! scale); a bias and the GELU are one pass over the product, in place; a bias, the residual
//! and the layer norm are one pass too. The attention is `attention.rs`'s, the dense products
//! [`Dense`]'s (`dense.rs`, `int8.rs`), the GELU's erf and the softmax's exp branch-free
//! polynomials (`math.rs`). docs/benchmarks.md has the speed. The weights and their names are
//! BERT's, loaded from the same safetensors file; the forward pass is tested against
//! sentence-transformers' own example.

use super::dense::Dense;
use super::int8::Kernel;
use super::math::{bias_gelu, lanes, softmax};
use super::storage::{values, values_of};
use candle_core::{CpuStorage, InplaceOp1, InplaceOp2, Layout, Result, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{Config, HiddenAct};

/// A BERT encoder's weights.
pub struct Bert {
    word: Tensor,
    /// Position embeddings plus the token type 0 embedding (every text is one segment).
    position: Tensor,
    norm: Norm,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
}

/// One transformer layer.
struct Layer {
    /// Query (scaled by 1/sqrt(head size)), key and value, one above the other.
    qkv: Dense,
    /// The attention's output product; its bias is added in `attention_norm`'s pass.
    attention_out: Dense,
    attention_norm: Norm,
    /// The feed-forward products; `up`'s bias is added with the activation, `down`'s in
    /// `out_norm`'s pass.
    up: Dense,
    up_bias: Vec<f32>,
    act: HiddenAct,
    down: Dense,
    out_norm: Norm,
}

/// A layer norm; after a product, its bias and the residual are added first, in the same pass.
struct Norm {
    /// The product's bias (unused, and zeros, for the embeddings' norm, which follows no product).
    bias: Vec<f32>,
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl Bert {
    /// Loads the weights under `bert.`, the model type's prefix or none, as BERT checkpoints
    /// name them.
    /// With `int8`, the dense products run in int8 on that kernel ([`super::int8`]).
    pub fn load(vb: VarBuilder, config: &Config, int8: Option<Kernel>) -> Result<Bert> {
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp(config.model_type.as_deref().unwrap_or("bert"))
        };
        let h = config.hidden_size;
        let e = vb.pp("embeddings");
        let word = e.get((config.vocab_size, h), "word_embeddings.weight")?;
        let position = e
            .get(
                (config.max_position_embeddings, h),
                "position_embeddings.weight",
            )?
            .broadcast_add(
                &e.get((config.type_vocab_size, h), "token_type_embeddings.weight")?
                    .get(0)?,
            )?;
        let norm = Norm::load(e.pp("LayerNorm"), None, config)?;
        let layers = (0..config.num_hidden_layers)
            .map(|i| Layer::load(vb.pp(format!("encoder.layer.{i}")), config, int8))
            .collect::<Result<_>>()?;
        Ok(Bert {
            word,
            position,
            norm,
            layers,
            heads: config.num_attention_heads,
            hidden: h,
        })
    }

    /// The last layer's token vectors, `(rows, length, hidden)`, for `rows` texts of `length`
    /// tokens each, given one after the other in `ids`.
    pub fn forward(&self, ids: &[u32], rows: usize, length: usize) -> Result<Tensor> {
        let n = rows * length;
        let ids = Tensor::from_slice(ids, n, self.word.device())?;
        let x = self
            .word
            .index_select(&ids, 0)?
            .reshape((rows, length, self.hidden))?
            .broadcast_add(&self.position.narrow(0, 0, length)?)?
            .reshape((n, self.hidden))?;
        let mut x = self.norm.apply(&x, None)?;
        for layer in &self.layers {
            x = layer.forward(&x, rows, length, self.heads)?;
        }
        x.reshape((rows, length, self.hidden))
    }
}

impl Layer {
    fn load(vb: VarBuilder, config: &Config, int8: Option<Kernel>) -> Result<Layer> {
        let (h, inner) = (config.hidden_size, config.intermediate_size);
        let head = (h / config.num_attention_heads) as f64;
        let a = vb.pp("attention.self");
        let part = |name: &str, scale: f64| -> Result<(Tensor, Tensor)> {
            Ok((
                (a.get((h, h), &format!("{name}.weight"))? * scale)?,
                (a.get(h, &format!("{name}.bias"))? * scale)?,
            ))
        };
        let (q, q_bias) = part("query", 1.0 / head.sqrt())?;
        let (k, k_bias) = part("key", 1.0)?;
        let (v, v_bias) = part("value", 1.0)?;
        let qkv = Dense::new(
            &Tensor::cat(&[q, k, v], 0)?,
            Some(Tensor::cat(&[q_bias, k_bias, v_bias], 0)?),
            int8,
        )?;
        let o = vb.pp("attention.output");
        let i = vb.pp("intermediate.dense");
        let out = vb.pp("output");
        Ok(Layer {
            qkv,
            attention_out: Dense::new(&o.get((h, h), "dense.weight")?, None, int8)?,
            attention_norm: Norm::load(o.pp("LayerNorm"), Some(o.get(h, "dense.bias")?), config)?,
            up: Dense::new(&i.get((inner, h), "weight")?, None, int8)?,
            up_bias: i.get(inner, "bias")?.to_vec1()?,
            act: config.hidden_act,
            down: Dense::new(&out.get((h, inner), "dense.weight")?, None, int8)?,
            out_norm: Norm::load(out.pp("LayerNorm"), Some(out.get(h, "dense.bias")?), config)?,
        })
    }

    /// `x` is `(rows * length, hidden)`.
    fn forward(&self, x: &Tensor, rows: usize, length: usize, heads: usize) -> Result<Tensor> {
        let (n, h) = x.dims2()?;
        let head = h / heads;
        let qkv = self.qkv.forward(x)?;
        let context = {
            let (storage, layout) = qkv.storage_and_layout();
            match &*storage {
                candle_core::Storage::Cpu(s) => {
                    super::attention::attention(values_of(s, layout)?, rows, length, heads, head)
                }
                _ => None,
            }
        };
        let context = match context {
            Some(c) => Tensor::from_vec(c, (n, h), x.device())?,
            None => self.candle_attention(&qkv, rows, length, heads, head)?,
        };
        let attended = self
            .attention_norm
            .apply(&self.attention_out.forward(&context)?, Some(x))?;
        let up = self.up.forward(&attended)?;
        up.inplace_op1(&BiasAct {
            bias: &self.up_bias,
            act: self.act,
        })?;
        self.out_norm
            .apply(&self.down.forward(&up)?, Some(&attended))
    }

    /// The attention by candle's matmul, where no kernel of ours runs.
    fn candle_attention(
        &self,
        qkv: &Tensor,
        rows: usize,
        length: usize,
        heads: usize,
        head: usize,
    ) -> Result<Tensor> {
        let n = rows * length;
        let h = heads * head;
        let qkv = qkv
            .reshape((rows, length, 3, heads, head))?
            .permute((2, 0, 3, 1, 4))?
            .contiguous()?;
        let (q, k, v) = (qkv.get(0)?, qkv.get(1)?, qkv.get(2)?);
        let scores = q.matmul(&k.t()?)?;
        scores.inplace_op1(&Softmax)?;
        scores
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((n, h))
    }
}

impl Norm {
    fn load(vb: VarBuilder, bias: Option<Tensor>, config: &Config) -> Result<Norm> {
        let h = config.hidden_size;
        Ok(Norm {
            bias: match bias {
                Some(b) => b.to_vec1()?,
                None => vec![0.0; h],
            },
            gamma: vb.get(h, "weight")?.to_vec1()?,
            beta: vb.get(h, "bias")?.to_vec1()?,
            eps: config.layer_norm_eps as f32,
        })
    }

    /// `norm(x + bias + residual)`, in place in `x` (a product's fresh output).
    fn apply(&self, x: &Tensor, residual: Option<&Tensor>) -> Result<Tensor> {
        match residual {
            Some(r) => x.inplace_op2(r, self)?,
            None => x.inplace_op1(self)?,
        }
        Ok(x.clone())
    }

    /// Each row of `values` (with its row of `residual`, when given) normalised.
    #[inline(always)]
    fn rows(&self, values: &mut [f32], residual: Option<&[f32]>) {
        let width = self.gamma.len();
        match residual {
            Some(r) => values
                .chunks_exact_mut(width)
                .zip(r.chunks_exact(width))
                .for_each(|(row, r)| self.row(row, Some(r))),
            None => values
                .chunks_exact_mut(width)
                .for_each(|row| self.row(row, None)),
        }
    }

    #[inline(always)]
    fn row(&self, row: &mut [f32], residual: Option<&[f32]>) {
        // Indexed loops over slices of one length: the compiler drops the bounds checks and
        // vectorises them inside the `wide!` twins (iterator chains of `zip` were left out of
        // line, in the baseline's instructions).
        let n = row.len();
        let (bias, gamma, beta) = (&self.bias[..n], &self.gamma[..n], &self.beta[..n]);
        if let Some(r) = residual {
            let r = &r[..n];
            for i in 0..n {
                row[i] += bias[i] + r[i];
            }
        }
        let mean = lanes(row, 0.0, |v| v, |s, v| s + v) / n as f32;
        let var = lanes(row, 0.0, |v| (v - mean) * (v - mean), |s, v| s + v) / n as f32;
        let inv = (var + self.eps).sqrt().recip();
        for i in 0..n {
            row[i] = (row[i] - mean) * inv * gamma[i] + beta[i];
        }
    }
}

impl InplaceOp1 for Norm {
    fn name(&self) -> &'static str {
        "bert-norm"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let values = values(storage, layout)?;
        norm_rows(self, values, None);
        Ok(())
    }
}

impl InplaceOp2 for Norm {
    fn name(&self) -> &'static str {
        "bert-add-norm"
    }

    fn cpu_fwd(
        &self,
        s1: &mut CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<()> {
        let (values, residual) = (values(s1, l1)?, values_of(s2, l2)?);
        norm_rows(self, values, Some(residual));
        Ok(())
    }
}

/// Adds a bias to each row and applies the activation in place: the exact GELU
/// `x/2 (1 + erf(x/sqrt 2))` ([`bias_gelu`]), its tanh approximation, or ReLU, as the model was
/// trained.
struct BiasAct<'a> {
    bias: &'a [f32],
    act: HiddenAct,
}

impl BiasAct<'_> {
    #[inline(always)]
    fn each(&self, values: &mut [f32], f: impl Fn(f32) -> f32) {
        for row in values.chunks_exact_mut(self.bias.len()) {
            for (v, b) in row.iter_mut().zip(self.bias) {
                *v = f(*v + b);
            }
        }
    }
}

impl InplaceOp1 for BiasAct<'_> {
    fn name(&self) -> &'static str {
        "bert-bias-activation"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let values = values(storage, layout)?;
        bias_act(self, values);
        Ok(())
    }
}

impl BiasAct<'_> {
    #[inline(always)]
    fn apply(&self, values: &mut [f32]) {
        const SQRT_2_OVER_PI: f32 = 0.797_884_6;
        match self.act {
            // Its own kernels: AVX-512's where the CPU has it.
            HiddenAct::Gelu => bias_gelu(values, self.bias),
            HiddenAct::GeluApproximate => self.each(values, |x| {
                0.5 * x * (1.0 + (SQRT_2_OVER_PI * x * (1.0 + 0.044_715 * x * x)).tanh())
            }),
            HiddenAct::Relu => self.each(values, |x| x.max(0.0)),
        }
    }
}

/// Each row's softmax, in place.
struct Softmax;

impl InplaceOp1 for Softmax {
    fn name(&self) -> &'static str {
        "bert-softmax"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let width = layout.dims().last().copied().unwrap_or(1);
        let values = values(storage, layout)?;
        softmax(values, width);
        Ok(())
    }
}

crate::wide! {
    /// [`Norm::rows`], as wide as the CPU allows.
    fn norm_rows(norm: &Norm, values: &mut [f32], residual: Option<&[f32]>) {
        norm.rows(values, residual)
    }
}

crate::wide! {
    /// [`BiasAct::apply`], as wide as the CPU allows.
    fn bias_act(op: &BiasAct, values: &mut [f32]) {
        op.apply(values)
    }
}
